/**
 * Issue 4 item 2, DESIGN §8: the agents.yaml loader. Every schema rule, the cross references, line numbers
 * for nested keys, YAML syntax errors, and the promise that no message ever echoes a value (a distinctive
 * secret placed in the file must be absent from every error).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentsConfigError, type ConfigIssue } from '../../../src/config/config-error.js';
import { loadAgentsConfig, loadAgentsConfigSync, parseAgentsConfig } from '../../../src/config/agents-config.loader.js';

const FILE = 'config/agents.yaml';
const SECRET = 'sk-live-DISTINCTIVE-7c1e9a44b2';

/** A valid file; line numbers matter to the tests below (line 1 is `system:`). */
const VALID = `system: quickstart
metadata: { team: platform }
models:
  default:
    provider: scripted
    costPerTokenUsd: 0.5
    script:
      - toolCalls: [ { identifier: clock, apiName: now, args: { tz: "{{prompt}}" } } ]
      - content: "It is {{lastToolResult}}."
  remote: { provider: openai, model: gpt-4o-mini, baseUrlEnv: MY_BASE, apiKeyEnv: MY_KEY, costPerInputTokenUsd: 0.001, costPerOutputTokenUsd: 0.002, timeoutSeconds: 5 }
mcpServers:
  kb: { url: "http://127.0.0.1:8931/mcp" }
agents:
  assistant:
    model: default
    instructions: "Be brief."
    tools: [ "clock/*", "mcp:kb" ]
    approval: [ "^fs/write" ]
    deferred: [ "^browser/" ]
    limits: { maxSteps: 10, maxCostUsd: 1, compactAtTokens: 8000 }
hooks:
  after_tool_call:
    - { plugin: audit_hooks, method: auditToolCall, failure_policy: warn }
`;

/** Replaces one line (1-based) of VALID. */
function withLine(line: number, text: string): string {
  const lines = VALID.split('\n');
  lines[line - 1] = text;
  return lines.join('\n');
}

function rejection(text: string): AgentsConfigError {
  let caught: unknown;
  try {
    parseAgentsConfig(text, FILE);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(AgentsConfigError);
  const error = caught as AgentsConfigError;
  expect(error.code).toBe('configuration');
  expect(error.message).not.toContain('DISTINCTIVE');
  for (const issue of error.issues) expect(issue.file).toBe(FILE);
  return error;
}

/** The one issue of a rejection, checked against line, path and a message fragment. */
function single(text: string, line: number, path: string, fragment: string): ConfigIssue {
  const error = rejection(text);
  expect(error.issues).toHaveLength(1);
  const issue = error.issues[0]!;
  expect({ line: issue.line, path: issue.path }).toEqual({ line, path });
  expect(issue.message).toContain(fragment);
  expect(error.message).toBe(`${FILE}:${line} ${path}: ${issue.message}`);
  return issue;
}

describe('agents.yaml loader: a valid file', () => {
  it('parses every section into typed data', () => {
    const config = parseAgentsConfig(VALID, FILE);
    expect(config.system).toBe('quickstart');
    expect(config.metadata).toEqual({ team: 'platform' });
    expect(config.models.default).toEqual({
      provider: 'scripted',
      costPerTokenUsd: 0.5,
      script: [{ toolCalls: [{ identifier: 'clock', apiName: 'now', args: { tz: '{{prompt}}' } }] }, { content: 'It is {{lastToolResult}}.' }],
    });
    expect(config.models.remote).toEqual({
      provider: 'openai',
      model: 'gpt-4o-mini',
      baseUrlEnv: 'MY_BASE',
      apiKeyEnv: 'MY_KEY',
      costPerInputTokenUsd: 0.001,
      costPerOutputTokenUsd: 0.002,
      timeoutSeconds: 5,
    });
    expect(config.mcpServers).toEqual({ kb: { url: 'http://127.0.0.1:8931/mcp' } });
    expect(config.agents.assistant).toEqual({
      model: 'default',
      instructions: 'Be brief.',
      tools: ['clock/*', 'mcp:kb'],
      approval: ['^fs/write'],
      deferred: ['^browser/'],
      limits: { maxSteps: 10, maxCostUsd: 1, compactAtTokens: 8000 },
    });
  });

  it('keeps hooks raw, with the line of the `hooks:` key, as the seam for the engine-config loader', () => {
    const config = parseAgentsConfig(VALID, FILE);
    expect(config.hooks).toEqual({
      data: { after_tool_call: [{ plugin: 'audit_hooks', method: 'auditToolCall', failure_policy: 'warn' }] },
      line: 21,
    });
    // Not validated here: an unknown point or bad entry passes through untouched.
    const odd = parseAgentsConfig(VALID.replace('after_tool_call:', 'not_a_point:'), FILE);
    expect(odd.hooks?.data).toEqual({ not_a_point: [{ plugin: 'audit_hooks', method: 'auditToolCall', failure_policy: 'warn' }] });
  });

  it('exposes the source for later validators: file, raw data and line lookup of nested keys', () => {
    const config = parseAgentsConfig(VALID, FILE);
    expect(config.source.file).toBe(FILE);
    expect((config.source.data as { system: string }).system).toBe('quickstart');
    expect(config.source.lineOf(['hooks', 'after_tool_call', 0, 'method'])).toBe(23);
    expect(config.source.lineOf(['agents', 'assistant', 'limits', 'maxSteps'])).toBe(20);
    expect(config.source.lineOf(['models', 'default', 'script', 1, 'content'])).toBe(9);
  });

  it('defaults metadata, models, mcpServers and agents to empty maps; hooks stays absent', () => {
    const config = parseAgentsConfig('system: bare\n', FILE);
    expect(config).toMatchObject({ system: 'bare', metadata: {}, models: {}, mcpServers: {}, agents: {} });
    expect(config.hooks).toBeUndefined();
  });

  it('accepts empty and `*` approval entries, like tool matchers, `*` as every tool, and an empty script', () => {
    const config = parseAgentsConfig(
      'system: s\nmodels: { m: { provider: scripted, script: [] } }\nagents: { a: { model: m, tools: ["*"], approval: ["", "*"] } }\n',
      FILE,
    );
    expect(config.agents.a?.tools).toEqual(['*']);
    expect(config.agents.a?.approval).toEqual(['', '*']);
    expect(config.models.m).toEqual({ provider: 'scripted', script: [] });
  });

  it('loads from a file, async and sync, naming the path as given', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agents-config-'));
    try {
      const file = join(dir, 'agents.yaml');
      writeFileSync(file, VALID);
      expect((await loadAgentsConfig(file)).source.file).toBe(file);
      expect(loadAgentsConfigSync(file).agents.assistant?.model).toBe('default');
      writeFileSync(file, withLine(15, '    model: gpt'));
      await expect(loadAgentsConfig(file)).rejects.toThrow(`${file}:15 agents.assistant.model: unknown model "gpt"`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an unreadable file names the file and the error code only', async () => {
    const missing = join(tmpdir(), 'no-such-dir-agents', 'agents.yaml');
    await expect(loadAgentsConfig(missing)).rejects.toThrow(`${missing}: cannot read the config file (ENOENT)`);
    expect(() => loadAgentsConfigSync(missing)).toThrow(AgentsConfigError);
  });
});

describe('agents.yaml loader: YAML syntax', () => {
  it('a syntax error names file and line, without quoting the source', () => {
    const error = rejection(withLine(17, `    tools: [ "clock/*", "${SECRET}"`));
    expect(error.issues.length).toBeGreaterThanOrEqual(1);
    expect(error.issues[0]!.line).toBeGreaterThanOrEqual(17);
    expect(error.issues[0]!.message).toMatch(/^YAML syntax error \([A-Z_]+\): /);
    expect(error.message).toMatch(new RegExp(`^${FILE}:\\d+: YAML syntax error`));
  });

  it('a duplicate key is an error at the duplicate', () => {
    const error = rejection('system: a\nmetadata: {}\nsystem: b\n');
    expect(error.issues).toEqual([expect.objectContaining({ line: 3, path: '', message: expect.stringContaining('DUPLICATE_KEY') })]);
  });

  it('a bad indentation is an error at its line', () => {
    const error = rejection(`system: s\nagents:\n  a:\n    model: m\n   tools: [ ${SECRET} ]\n`);
    expect(error.issues[0]!.line).toBe(5);
  });

  it('a block-scalar header with extra text is an error that does not quote the text', () => {
    const error = rejection(`system: s\nmetadata:\n  note: |${SECRET}\n    text\n`);
    expect(error.issues[0]).toEqual(expect.objectContaining({ line: 3, message: expect.stringMatching(/^YAML syntax error \(UNEXPECTED_TOKEN\): /) }));
  });

  it('an unknown alias names the line, not the alias', () => {
    const error = rejection(`system: *${'DISTINCTIVE'}\n`);
    expect(error.issues[0]).toEqual(expect.objectContaining({ line: 1, message: expect.stringMatching(/^YAML error: aliases/) }));
  });

  it('several documents in one file are rejected', () => {
    expect(rejection('system: a\n---\nsystem: b\n').issues[0]!.message).toContain('MULTIPLE_DOCS');
  });

  it('an empty file or a top-level list is not a config', () => {
    expect(single('', 1, '(root)', 'must be a mapping').message).toContain('system');
    single('- a\n- b\n', 1, '(root)', 'must be a mapping');
  });

  it('alias expansion is bounded (billion laughs)', () => {
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 8; i++) lines.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(', ')}]`);
    const error = rejection(lines.join('\n'));
    expect(error.issues[0]!.message).toMatch(/^YAML error: /);
  });
});

describe('agents.yaml loader: top-level rules', () => {
  it('system missing: is required', () => {
    single('models: {}\n', 1, 'system', 'is required (a string)');
  });

  it('system empty or not a string', () => {
    single('system: ""\n', 1, 'system', 'non-empty');
    single('system: [a]\n', 1, 'system', 'must be a string');
  });

  it('an unknown top-level key is reported at its own line', () => {
    single(`${VALID}apiKey: ${SECRET}\n`, 24, 'apiKey', 'unknown key');
  });

  it('metadata must be a mapping', () => {
    single(withLine(2, 'metadata: [a, b]'), 2, 'metadata', 'must be a mapping');
  });

  it('a __proto__ key anywhere is rejected at its line', () => {
    single(withLine(2, 'metadata: { __proto__: { polluted: true } }'), 2, 'metadata.__proto__', '"__proto__" is not allowed');
  });
});

describe('agents.yaml loader: models', () => {
  it('an unknown provider lists the allowed ones', () => {
    single(withLine(5, '    provider: anthropic'), 5, 'models.default.provider', 'must be one of: scripted, openai, code');
  });

  it('DESIGN §12: a { provider: code } entry needs the name of a model given in code, and takes no provider settings', () => {
    const missing = rejection('system: s\nmodels:\n  m:\n    provider: code\n');
    expect(missing.issues).toEqual([expect.objectContaining({ line: 3, path: 'models.m.name' })]);
    const stray = rejection('system: s\nmodels:\n  m:\n    provider: code\n    name: main\n    model: gpt-4.1\n');
    expect(stray.issues).toEqual([expect.objectContaining({ line: 6, path: 'models.m.model' })]);
  });

  it('a missing provider is reported at the model', () => {
    const error = rejection('system: s\nmodels:\n  m:\n    script: []\n');
    expect(error.issues).toEqual([expect.objectContaining({ line: 3, path: 'models.m.provider' })]);
  });

  it('a model id must be an id', () => {
    single('system: s\nmodels:\n  "my model": { provider: scripted, script: [] }\n', 3, 'models["my model"]', 'must be an id');
  });

  it('scripted: script is required and must be a list', () => {
    single('system: s\nmodels:\n  m: { provider: scripted }\n', 3, 'models.m.script', 'is required (a list)');
    single('system: s\nmodels:\n  m:\n    provider: scripted\n    script: hello\n', 5, 'models.m.script', 'must be a list');
  });

  it('scripted: costPerTokenUsd must be ≥ 0', () => {
    single(withLine(6, '    costPerTokenUsd: -1'), 6, 'models.default.costPerTokenUsd', '≥ 0');
    single(withLine(6, '    costPerTokenUsd: cheap'), 6, 'models.default.costPerTokenUsd', 'must be a finite number');
    single(withLine(6, '    costPerTokenUsd: .inf'), 6, 'models.default.costPerTokenUsd', 'must be a finite number');
  });

  it('scripted: an entry takes only content and toolCalls', () => {
    single(withLine(9, `      - { content: "x", answer: "${SECRET}" }`), 9, 'models.default.script[1].answer', 'unknown key');
    single(withLine(9, '      - content: 42'), 9, 'models.default.script[1].content', 'must be a string');
  });

  it('scripted: a tool call needs identifier and apiName, args is a mapping, no other keys', () => {
    single(withLine(8, '      - toolCalls: [ { apiName: now } ]'), 8, 'models.default.script[0].toolCalls[0].identifier', 'is required');
    single(withLine(8, '      - toolCalls: [ { identifier: clock, apiName: "" } ]'), 8, 'models.default.script[0].toolCalls[0].apiName', 'non-empty');
    single(withLine(8, '      - toolCalls: [ { identifier: clock, apiName: now, args: [1] } ]'), 8, 'models.default.script[0].toolCalls[0].args', 'must be a mapping');
    single(withLine(8, '      - toolCalls: [ { identifier: clock, apiName: now, id: x } ]'), 8, 'models.default.script[0].toolCalls[0].id', 'unknown key');
  });

  it('scripted: keys of a multi-line tool call are reported at their own lines', () => {
    const text = withLine(8, '      - toolCalls:\n          - identifier: clock\n            apiName: now\n            args:\n              nested: { deep: [ 1 ] }\n            extra: true');
    single(text, 13, 'models.default.script[0].toolCalls[0].extra', 'unknown key');
  });

  it('openai: model is required; env names must be variable names (a pasted key is not echoed)', () => {
    single('system: s\nmodels:\n  r: { provider: openai }\n', 3, 'models.r.model', 'is required (a string)');
    single(withLine(10, `  remote: { provider: openai, model: m, apiKeyEnv: "${SECRET}" }`), 10, 'models.remote.apiKeyEnv', 'environment variable name');
    single(withLine(10, '  remote: { provider: openai, model: m, baseUrlEnv: "1BAD" }'), 10, 'models.remote.baseUrlEnv', 'environment variable name');
  });

  it('openai: a literal apiKey is an unknown key, never echoed', () => {
    single(withLine(10, `  remote: { provider: openai, model: m, apiKey: "${SECRET}" }`), 10, 'models.remote.apiKey', 'unknown key');
  });

  it('openai: costs ≥ 0 and timeoutSeconds > 0 and bounded', () => {
    single(withLine(10, '  remote: { provider: openai, model: m, costPerInputTokenUsd: -0.1 }'), 10, 'models.remote.costPerInputTokenUsd', '≥ 0');
    single(withLine(10, '  remote: { provider: openai, model: m, costPerOutputTokenUsd: -2 }'), 10, 'models.remote.costPerOutputTokenUsd', '≥ 0');
    single(withLine(10, '  remote: { provider: openai, model: m, timeoutSeconds: 0 }'), 10, 'models.remote.timeoutSeconds', 'greater than 0');
    single(withLine(10, '  remote: { provider: openai, model: m, timeoutSeconds: 9999999 }'), 10, 'models.remote.timeoutSeconds', 'at most');
  });

  it('openai: scripted-only keys are unknown', () => {
    single(withLine(10, '  remote: { provider: openai, model: m, script: [] }'), 10, 'models.remote.script', 'unknown key');
  });
});

describe('agents.yaml loader: mcpServers', () => {
  it('url must be an absolute http(s) URL', () => {
    single(withLine(12, '  kb: { url: "ftp://example.com/mcp" }'), 12, 'mcpServers.kb.url', 'http(s) URL');
    single(withLine(12, '  kb: { url: "not a url" }'), 12, 'mcpServers.kb.url', 'http(s) URL');
    single(withLine(12, '  kb: {}'), 12, 'mcpServers.kb.url', 'is required');
  });

  it('url must not embed credentials (and does not echo them)', () => {
    single(withLine(12, `  kb: { url: "https://user:${SECRET}@kb.example.com/mcp" }`), 12, 'mcpServers.kb.url', 'must not embed credentials');
  });

  it('a server takes only url; ids must be ids', () => {
    single(withLine(12, `  kb: { url: "http://127.0.0.1/mcp", token: "${SECRET}" }`), 12, 'mcpServers.kb.token', 'unknown key');
    single(withLine(12, '  k.b: { url: "http://127.0.0.1/mcp" }').replace('"mcp:kb"', '"clock/now"'), 12, 'mcpServers["k.b"]', 'must be an id');
  });
});

describe('agents.yaml loader: agents', () => {
  it('model must reference a defined model', () => {
    const issue = single(withLine(15, '    model: gpt'), 15, 'agents.assistant.model', 'unknown model "gpt"');
    expect(issue.message).toContain('(defined: default, remote)');
  });

  it('a model reference that looks like a key is not quoted', () => {
    const issue = single(withLine(15, `    model: ${SECRET}`), 15, 'agents.assistant.model', 'unknown model');
    expect(issue.message).toBe('unknown model (defined: default, remote)');
  });

  it('a model id that is an Object.prototype member is still unknown', () => {
    single(withLine(15, '    model: constructor'), 15, 'agents.assistant.model', 'unknown model "constructor"');
  });

  it('model is required', () => {
    single('system: s\nagents:\n  a: { tools: [] }\n', 3, 'agents.a.model', 'is required (a string)');
  });

  it('mcp:<server> must reference a defined MCP server, at the entry\'s line', () => {
    const text = withLine(17, '    tools:\n      - "clock/*"\n      - "mcp:wiki"');
    single(text, 19, 'agents.assistant.tools[1]', 'unknown MCP server "wiki" (defined: kb)');
  });

  it('mcp:<server> with no servers defined says so', () => {
    single('system: s\nmodels: { m: { provider: scripted, script: [] } }\nagents:\n  a: { model: m, tools: [ "mcp:kb" ] }\n', 4, 'agents.a.tools[0]', 'no mcpServers are defined');
  });

  it('tools entries must be identifier/apiName globs or mcp:<server>', () => {
    // `single` checks that "DISTINCTIVE" never appears in a message.
    for (const bad of ['***', 'DISTINCTIVE', 'DISTINCTIVE/b/c', '/DISTINCTIVE', 'DISTINCTIVE/', 'mcp:', 'mcp:DISTINCTIVE id', 'DISTINCTIVE/ now']) {
      single(withLine(17, `    tools: [ ${JSON.stringify(bad)} ]`), 17, 'agents.assistant.tools[0]', 'must');
    }
  });

  it('approval and deferred entries must be regexes the linear engine accepts (not echoed)', () => {
    single(withLine(18, '    approval: [ "^fs/write", "(unclosed" ]'), 18, 'agents.assistant.approval[1]', 'invalid regular expression');
    // Backreferences are not linear-time: rejected.
    const issue = single(withLine(19, '    deferred: [ "(a)\\\\1" ]'), 19, 'agents.assistant.deferred[0]', 'invalid regular expression');
    expect(issue.message).not.toContain('(a)');
  });

  it('limits: positive integers for steps and tokens, positive cost, no other keys', () => {
    single(withLine(20, '    limits: { maxSteps: 0 }'), 20, 'agents.assistant.limits.maxSteps', 'at least 1');
    single(withLine(20, '    limits: { maxSteps: 2.5 }'), 20, 'agents.assistant.limits.maxSteps', 'integer');
    single(withLine(20, '    limits: { maxCostUsd: 0 }'), 20, 'agents.assistant.limits.maxCostUsd', 'greater than 0');
    single(withLine(20, '    limits: { compactAtTokens: -5 }'), 20, 'agents.assistant.limits.compactAtTokens', 'at least 1');
    single(withLine(20, '    limits: { maxTokenz: 5 }'), 20, 'agents.assistant.limits.maxTokenz', 'unknown key');
  });

  it('F4/F5: budgets parse with their defaults; perTool globs compile with the tools: matcher', () => {
    const config = parseAgentsConfig(withLine(20, '    limits: { maxTokens: 2000, maxToolCalls: 0, perTool: { "payments/*": 1, "mcp:kb": 0 }, maxRepeatedFailures: 2 }'), FILE);
    expect(config.agents['assistant']!.limits).toEqual({
      maxTokens: 2000,
      maxToolCalls: 0,
      perTool: [
        { pattern: 'payments/*', max: 1 },
        { pattern: 'mcp:kb', max: 0 },
      ],
      maxRepeatedFailures: 2,
    });
  });

  it('F4/F5: negative or non-integer budgets are configuration errors naming file, line and key', () => {
    single(withLine(20, '    limits: { maxTokens: 0 }'), 20, 'agents.assistant.limits.maxTokens', 'at least 1');
    single(withLine(20, '    limits: { maxTokens: 1.5 }'), 20, 'agents.assistant.limits.maxTokens', 'integer');
    single(withLine(20, '    limits: { maxToolCalls: -1 }'), 20, 'agents.assistant.limits.maxToolCalls', 'at least 0');
    single(withLine(20, '    limits: { maxToolCalls: 2.5 }'), 20, 'agents.assistant.limits.maxToolCalls', 'integer');
    single(withLine(20, '    limits: { maxRepeatedFailures: 0 }'), 20, 'agents.assistant.limits.maxRepeatedFailures', 'at least 1');
    single(withLine(20, '    limits: { perTool: { "pay/*": -1 } }'), 20, 'agents.assistant.limits.perTool', 'entry 1: the cap must be an integer ≥ 0');
    single(withLine(20, '    limits: { perTool: { "pay/*": 1, "clock/*": 0.5 } }'), 20, 'agents.assistant.limits.perTool', 'entry 2: the cap must be an integer ≥ 0');
    single(withLine(20, '    limits: { perTool: [ 1 ] }'), 20, 'agents.assistant.limits.perTool', 'must be');
  });

  it('F4 (G6): a perTool pattern that is not a tools glob, or over the pattern limits, is a configuration error that never echoes it', () => {
    single(withLine(20, '    limits: { perTool: { "clock": 1 } }'), 20, 'agents.assistant.limits.perTool', 'entry 1: the pattern must be a glob');
    const long = `x/${'a'.repeat(1100)}`;
    const issue = single(withLine(20, `    limits: { perTool: { "${long}": 1 } }`), 20, 'agents.assistant.limits.perTool', 'entry 1: the pattern must be at most 1024 characters');
    expect(issue.message).not.toContain('aaaa');
    // Each pattern within its own limits, together over the agent's compiled-size budget.
    const many = Array.from({ length: 30 }, (_, i) => `"t${i}/${'b'.repeat(1000)}": 1`).join(', ');
    single(withLine(20, `    limits: { perTool: { ${many} } }`), 20, 'agents.assistant.limits.perTool', 'together compile to too large a program');
  });

  it('an unknown agent key is reported at its own line', () => {
    single(withLine(16, `    password: "${SECRET}"`), 16, 'agents.assistant.password', 'unknown key');
  });

  it('instructions must be a string; tools a list', () => {
    single(withLine(16, '    instructions: { a: 1 }'), 16, 'agents.assistant.instructions', 'must be a string');
    single(withLine(17, '    tools: "clock/*"'), 17, 'agents.assistant.tools', 'must be a list');
  });

  it('agent ids must be ids', () => {
    single(withLine(14, '  "assistant/v2":'), 14, 'agents["assistant/v2"]', 'must be an id');
  });
});

describe('agents.yaml loader: several problems', () => {
  it('are all reported, sorted by line, one per message line', () => {
    const text = withLine(20, '    limits: { maxSteps: 0 }').replace('    costPerTokenUsd: 0.5', '    costPerTokenUsd: -1');
    const error = rejection(text);
    expect(error.issues.map((i) => [i.line, i.path])).toEqual([
      [6, 'models.default.costPerTokenUsd'],
      [20, 'agents.assistant.limits.maxSteps'],
    ]);
    expect(error.message.split('\n')).toHaveLength(2);
  });

  it('secret values anywhere in a rejected file never reach the message', () => {
    const text = `system: s
models:
  m: { provider: openai, model: "${SECRET}", apiKey: "${SECRET}", apiKeyEnv: "${SECRET}", timeoutSeconds: "${SECRET}" }
mcpServers:
  kb: { url: "${SECRET}" }
agents:
  a: { model: "${SECRET}", tools: [ "${SECRET}" ], approval: [ "(${SECRET}" ], limits: { maxSteps: "${SECRET}" } }
`;
    const error = rejection(text);
    expect(error.issues.length).toBeGreaterThanOrEqual(6);
    expect(error.message).not.toContain(SECRET);
  });
});

describe('agents.yaml loader: clientTools (DESIGN §8, SPEC G1)', () => {
  // Appended after VALID's last line (23): `clientTools:` is line 24, its first entry line 25.
  const withClientTools = (entry: string) => `${VALID}clientTools:\n${entry}\n`;

  it('G1: declared client tools are parsed with their description and schema', () => {
    const config = parseAgentsConfig(withClientTools('  browser/open: { description: "Open a page", parameters: { type: object, properties: { url: { type: string } } } }'), FILE);
    expect(config.clientTools).toEqual({ 'browser/open': { description: 'Open a page', parameters: { type: 'object', properties: { url: { type: 'string' } } } } });
  });

  it('G1: a client tool key that is not identifier/apiName is an error with file, line and key', () => {
    const error = rejection(withClientTools('  browser: { description: "x", parameters: { type: object } }'));
    expect(error.issues[0]).toMatchObject({ line: 25, path: 'clientTools.browser' });
    expect(error.issues[0]!.message).toContain('identifier/apiName');
  });

  it('G1: a client tool schema that is not an object schema, or not valid, names the key and never the value', () => {
    single(withClientTools(`  browser/open: { description: "x", parameters: { type: string, default: "${SECRET}" } }`), 25, 'clientTools["browser/open"].parameters', 'must be an object schema');
    single(withClientTools(`  browser/open: { description: "x", parameters: { type: object, properties: { url: { type: "${SECRET}" } } } }`), 25, 'clientTools["browser/open"].parameters', 'is not a valid JSON Schema');
  });

  it('G1: a client tool entry with an unknown key is an error', () => {
    const error = rejection(withClientTools('  browser/open: { description: "x", parameters: { type: object }, deferred: true }'));
    expect(error.issues[0]).toMatchObject({ line: 25, path: 'clientTools["browser/open"].deferred' });
  });
});
