/**
 * SPEC G7 from the command line, on the built CLI (dist/): a malformed server secret or setting read from
 * the environment stops `agentctl serve` and `agentctl worker` with exit code 2 and one line naming the
 * variable, never its value; a `tools:` entry that selects nothing stops `validate` and `serve` with
 * file, line and key; an unset model variable is a warning.
 */
import { jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratch, type Scratch } from './support/e2e-config.js';
import { ensureBuilt } from './support/server-process.js';

// Each test spawns the built CLI (a few seconds each on a busy 2-core machine).
jest.setTimeout(120_000);

/** Settings this file sets itself: the child inherits none of them from the test's environment. */
const OWN_VARIABLES = /^(AGENT_HOOKS_|AGENT_HOOK_WEBHOOK_|QSTASH_|REDIS_URL$)/;

interface Outcome {
  /** The exit code, or 'listening' when the server started (it is stopped then). */
  status: number | null | 'listening';
  output: string;
}

/** Runs agentctl until it exits, or until a server says it is listening (then stops it): no fixed wait. */
function agentctl(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  const childEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !OWN_VARIABLES.test(name)) childEnv[name] = value;
  const child = spawn(process.execPath, ['dist/cli/agentctl.js', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...childEnv, ...env } });
  let output = '';
  let listening = false;
  return new Promise((resolve) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (!listening && /listening on http|worker ready/.test(output)) {
        listening = true;
        child.kill('SIGKILL');
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => resolve({ status: listening ? 'listening' : code, output }));
  });
}

let files: Scratch;

beforeAll(() => {
  ensureBuilt();
  files = scratch('fail-fast');
});

afterAll(() => files.remove());

const serve = (name: string, extra: string[] = []) => ['serve', '--port', '0', '--config', files.config, '--plugins', files.plugins, '--database', files.database(name), ...extra];
// The worker stops before it connects anywhere, so the database need not answer.
const worker = () => ['worker', '--config', files.config, '--plugins', files.plugins, '--database', 'postgres://127.0.0.1:1/unused'];

/** Exit 2, one line naming the variable, no stack trace, and never the value. */
function expectRefused(outcome: Outcome, variable: string, value: string): void {
  expect(outcome.status).toBe(2);
  const lines = outcome.output.trimEnd().split('\n');
  expect(lines).toEqual([expect.stringContaining(variable)]);
  expect(outcome.output).not.toContain(value);
  expect(outcome.output).not.toContain('    at ');
}

describe('G7 fail fast on server configuration', () => {
  const BAD_SECRET = 'not-a-whsec-G7-value!!';

  it('G7: a malformed AGENT_HOOKS_WEBHOOK_SECRET stops serve with exit 2 naming the variable', async () => {
    expectRefused(await agentctl(serve('secret'), { AGENT_HOOKS_WEBHOOK_SECRET: BAD_SECRET }), 'AGENT_HOOKS_WEBHOOK_SECRET', BAD_SECRET);
  });

  it('G7: a malformed AGENT_HOOKS_WEBHOOK_SECRET stops worker with exit 2 naming the variable', async () => {
    expectRefused(await agentctl(worker(), { AGENT_HOOKS_WEBHOOK_SECRET: BAD_SECRET }), 'AGENT_HOOKS_WEBHOOK_SECRET', BAD_SECRET);
  });

  it.each([
    ['AGENT_HOOKS_WEBHOOK_ALLOW_NETWORKS', '10.0.0.0/8,G7-not-a-cidr-3141'],
    ['AGENT_HOOKS_APP_URL', 'ftp://g7-app-url-2718.example'],
    ['QSTASH_URL', 'not a url G7-1618'],
    ['QSTASH_TOKEN', 'G7 token with spaces 1414'],
    ['AGENT_HOOKS_API_KEYS', 'G7-key-without-owner-1732'],
    ['AGENT_HOOKS_API_KEYS_FILE', '/nonexistent/G7-keys-file-2236'],
    ['AGENT_HOOKS_CALLER_ENV_ALLOWLIST', 'HOOK_TOKEN,G7-not-a-name-2449'],
  ])('G7: a malformed %s stops serve with exit 2 naming the variable', async (variable, value) => {
    expectRefused(await agentctl(serve(variable), { [variable]: value }), variable, value);
  });

  it.each([
    ['AGENT_HOOKS_WEBHOOK_ALLOW_NETWORKS', 'G7-not-a-cidr-3141'],
    ['QSTASH_URL', 'g7-qstash-url-1618'],
    ['REDIS_URL', 'http://g7-redis-host-2718:6379'],
  ])('G7: a malformed %s stops worker with exit 2 naming the variable', async (variable, value) => {
    expectRefused(await agentctl(worker(), { [variable]: value }), variable, value);
  });

  it('G7: a malformed REDIS_URL stops serve --mode queue with exit 2 naming the variable', async () => {
    const value = 'http://g7-redis-host-2718:6379';
    const outcome = await agentctl(['serve', '--port', '0', '--config', files.config, '--mode', 'queue', '--database', 'postgres://127.0.0.1:1/unused'], { REDIS_URL: value });
    expectRefused(outcome, 'REDIS_URL', value);
  });

  it('G7: a well-formed secret and settings start serve as before', async () => {
    const outcome = await agentctl(serve('good'), {
      AGENT_HOOKS_WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
      AGENT_HOOKS_WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8',
      QSTASH_URL: 'http://127.0.0.1:8080',
    });
    expect(outcome.status).toBe('listening');
  });
});

describe('G7 tools entries and model variables', () => {
  const SELECTS_NOTHING = `system: t
models:
  default: { provider: scripted, costPerTokenUsd: 0, script: [ { content: "hi" } ] }
mcpServers:
  kb: { url: "http://127.0.0.1:1/mcp" }
agents:
  assistant:
    model: default
    tools:
      - "clock/now"
      - "clock/nwo"
      - "kb/*"
      - "clok/*"
      - "agents/call"
`;

  it('G7: a tools entry that selects nothing is a config error with file, line, key and the entry itself (validate)', async () => {
    const config = join(files.dir, 'selects-nothing.yaml');
    writeFileSync(config, SELECTS_NOTHING);
    const outcome = await agentctl(['validate', '--config', config]);
    expect(outcome.status).toBe(2);
    expect(outcome.output.trimEnd().split('\n')).toEqual([
      `${config}:11 agents.assistant.tools[1] "clock/nwo": selects no tool: no local tool, declared client tool or configured MCP server matches it`,
      `${config}:13 agents.assistant.tools[3] "clok/*": selects no tool: no local tool, declared client tool or configured MCP server matches it`,
    ]);
  });

  it('G7: a tools entry that selects nothing is a config error with file, line, key and the entry itself (serve stops with exit 2)', async () => {
    const config = join(files.dir, 'selects-nothing-serve.yaml');
    writeFileSync(config, SELECTS_NOTHING);
    const outcome = await agentctl(['serve', '--port', '0', '--config', config, '--database', files.database('tools')]);
    expect(outcome.status).toBe(2);
    expect(outcome.output).toContain(`${config}:11 agents.assistant.tools[1] "clock/nwo": selects no tool`);
    expect(outcome.output).toContain(`${config}:13 agents.assistant.tools[3] "clok/*": selects no tool`);
    expect(outcome.output).not.toContain('    at ');
  });

  it('G7: an unset model key or base-URL variable is a warning naming the variable at validate (exit 0)', async () => {
    const config = join(files.dir, 'unset-variables.yaml');
    writeFileSync(
      config,
      `system: t
models:
  gpt: { provider: openai, model: gpt-4o-mini, apiKeyEnv: G7_UNSET_API_KEY, baseUrlEnv: G7_UNSET_BASE_URL }
agents:
  assistant: { model: gpt, tools: [ "clock/now" ] }
`,
    );
    const outcome = await agentctl(['validate', '--config', config]);
    expect(outcome.status).toBe(0);
    const lines = outcome.output.trimEnd().split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        'ok',
        expect.stringMatching(new RegExp(`^warning: ${escape(config)}:3 models\\.gpt\\.apiKeyEnv: G7_UNSET_API_KEY is not set`)),
        expect.stringMatching(new RegExp(`^warning: ${escape(config)}:3 models\\.gpt\\.baseUrlEnv: G7_UNSET_BASE_URL is not set`)),
      ]),
    );
    expect(lines).toHaveLength(3);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
