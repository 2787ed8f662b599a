/**
 * SPEC K4, DESIGN §12: `retry` and `timeoutMs` per model, `fallback` per agent in agents.yaml. Bad input is a
 * configuration error naming file, line and key, never quoting a value; the directory hands the runtime
 * each agent's chain of models with their settings.
 */
import { AgentsConfigError, type ConfigIssue } from '../../../src/config/config-error.js';
import { parseAgentsConfig } from '../../../src/config/agents-config.loader.js';
import { ConfigAgentDirectory } from '../../../src/config/config-agent-directory.js';
import { DEFAULT_MODEL_RETRY } from '../../../src/runtime/models/model-retry-policy.js';

const FILE = 'config/agents.yaml';
const SECRET = 'sk-live-DISTINCTIVE-5e0c1d';

/** Line numbers matter below: line 4 is `main`, 5 `backup`, 6 `spare`, 9 the agent's `fallback`. */
const VALID = `system: k4
models:
  # the agent's own model and two more
  main:   { provider: openai, model: gpt-main, baseUrlEnv: MAIN_URL, retry: { attempts: 4, initialDelayMs: 100, maxDelayMs: 2000 }, timeoutMs: 120000 }
  backup: { provider: openai, model: gpt-backup, baseUrlEnv: BACKUP_URL }
  spare:  { provider: scripted, retry: { attempts: 1 }, script: [ { content: "spare" } ] }
agents:
  assistant:
    fallback: [ backup, spare ]
    model: main
`;

function withLine(line: number, text: string): string {
  const lines = VALID.split('\n');
  lines[line - 1] = text;
  return lines.join('\n');
}

/** The one issue of a rejection, checked against line, path and a message fragment; no value is echoed. */
function single(text: string, line: number, path: string, fragment: string): ConfigIssue {
  let caught: unknown;
  try {
    parseAgentsConfig(text, FILE);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(AgentsConfigError);
  const error = caught as AgentsConfigError;
  expect(error.message).not.toContain('DISTINCTIVE');
  expect(error.issues).toHaveLength(1);
  const issue = error.issues[0]!;
  expect({ file: issue.file, line: issue.line, path: issue.path }).toEqual({ file: FILE, line, path });
  expect(issue.message).toContain(fragment);
  expect(error.message).toBe(`${FILE}:${line} ${path}: ${issue.message}`);
  return issue;
}

describe('K4 agents.yaml: retry, timeoutMs and fallback', () => {
  it('K4: retry and timeoutMs per model and fallback per agent are parsed as written', () => {
    const config = parseAgentsConfig(VALID, FILE);
    expect(config.models.main).toMatchObject({ retry: { attempts: 4, initialDelayMs: 100, maxDelayMs: 2000 }, timeoutMs: 120000 });
    expect(config.models.spare).toMatchObject({ retry: { attempts: 1 } });
    expect(config.agents.assistant).toEqual({ model: 'main', fallback: ['backup', 'spare'] });
  });

  it('K4: the directory gives the agent its model settings and its fallback chain, unset retry fields from the default (3 attempts in all)', async () => {
    const directory = new ConfigAgentDirectory(parseAgentsConfig(VALID, FILE));
    try {
      const agent = directory.agent('assistant')!;
      expect(agent.modelSettings).toEqual({ retry: { attempts: 4, initialDelayMs: 100, maxDelayMs: 2000 }, timeoutMs: 120000 });
      expect(agent.fallback?.map(({ name, provider, retry, timeoutMs }) => ({ name, provider, retry, timeoutMs }))).toEqual([
        { name: 'gpt-backup', provider: 'openai', retry: DEFAULT_MODEL_RETRY, timeoutMs: undefined },
        { name: 'spare', provider: 'scripted', retry: { ...DEFAULT_MODEL_RETRY, attempts: 1 }, timeoutMs: undefined },
      ]);
      expect(DEFAULT_MODEL_RETRY.attempts).toBe(3);
      // One model instance per model id, shared by every agent that names it.
      expect(agent.fallback?.[0]?.model).toBeDefined();
      expect(agent.fallback?.[0]?.model).not.toBe(agent.model);
    } finally {
      await directory.close();
    }
  });

  it('K4: an agent without fallback has none', async () => {
    const directory = new ConfigAgentDirectory(parseAgentsConfig(withLine(9, '    tools: []'), FILE));
    try {
      expect(directory.agent('assistant')?.fallback).toBeUndefined();
      expect(directory.agent('assistant')?.modelSettings?.retry?.attempts).toBe(4);
    } finally {
      await directory.close();
    }
  });

  it('K4: a malformed retry is an error at its key (attempts, delays, unknown keys, not a mapping)', () => {
    single(withLine(5, '  backup: { provider: openai, model: b, retry: { attempts: 0 } }'), 5, 'models.backup.retry.attempts', 'at least 1');
    single(withLine(5, '  backup: { provider: openai, model: b, retry: { attempts: 2.5 } }'), 5, 'models.backup.retry.attempts', 'integer');
    single(withLine(5, '  backup: { provider: openai, model: b, retry: { attempts: 11 } }'), 5, 'models.backup.retry.attempts', 'at most 10');
    single(withLine(5, '  backup: { provider: openai, model: b, retry: { initialDelayMs: -1 } }'), 5, 'models.backup.retry.initialDelayMs', '≥ 0');
    single(withLine(5, '  backup: { provider: openai, model: b, retry: { maxDelayMs: 99999999999 } }'), 5, 'models.backup.retry.maxDelayMs', 'at most');
    single(withLine(5, '  backup: { provider: openai, model: b, retry: { initialDelayMs: 500, maxDelayMs: 100 } }'), 5, 'models.backup.retry.initialDelayMs', 'not be greater than maxDelayMs');
    single(withLine(5, `  backup: { provider: openai, model: b, retry: { tries: "${SECRET}" } }`), 5, 'models.backup.retry.tries', 'unknown key');
    single(withLine(5, '  backup: { provider: openai, model: b, retry: 3 }'), 5, 'models.backup.retry', 'must be a mapping');
  });

  it('K4: a malformed timeoutMs is an error at its key; timeoutMs and timeoutSeconds together are refused', () => {
    single(withLine(5, '  backup: { provider: openai, model: b, timeoutMs: 0 }'), 5, 'models.backup.timeoutMs', 'greater than 0');
    single(withLine(5, '  backup: { provider: openai, model: b, timeoutMs: 1.5 }'), 5, 'models.backup.timeoutMs', 'integer');
    single(withLine(5, '  backup: { provider: openai, model: b, timeoutMs: "fast" }'), 5, 'models.backup.timeoutMs', 'must be a finite number');
    single(withLine(5, '  backup: { provider: openai, model: b, timeoutMs: 1000, timeoutSeconds: 1 }'), 5, 'models.backup.timeoutMs', 'not both');
  });

  it('K4: a malformed fallback is an error at its key', () => {
    single(withLine(9, '    fallback: backup'), 9, 'agents.assistant.fallback', 'must be a list');
    single(withLine(9, '    fallback: [ 3 ]'), 9, 'agents.assistant.fallback[0]', 'must be a string');
  });

  it('K4: a fallback naming an unknown model is an error at the entry, listing the defined models (a key-like name is not quoted)', () => {
    const issue = single(withLine(9, '    fallback: [ backup, gpt ]'), 9, 'agents.assistant.fallback[1]', 'unknown model "gpt"');
    expect(issue.message).toContain('(defined: main, backup, spare)');
    single(withLine(9, `    fallback: [ "${SECRET}" ]`), 9, 'agents.assistant.fallback[0]', 'unknown model (defined');
  });

  it('K4: a fallback naming the agent\'s own model (a self-reference) is an error', () => {
    single(withLine(9, '    fallback: [ backup, main ]'), 9, 'agents.assistant.fallback[1]', 'the agent\'s own model');
  });

  it('K4: a model named twice in the chain (a cycle) is an error at the repeat', () => {
    single(withLine(9, '    fallback: [ backup, spare, backup ]'), 9, 'agents.assistant.fallback[2]', 'each model is tried once');
  });

  it('K4: problems of a multi-line fallback list are reported at the entry\'s own line', () => {
    const text = VALID.replace('    fallback: [ backup, spare ]\n', '    fallback:\n      - backup\n      - nowhere\n');
    single(text, 11, 'agents.assistant.fallback[1]', 'unknown model "nowhere"');
  });
});
