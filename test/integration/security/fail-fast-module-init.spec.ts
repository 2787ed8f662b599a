/**
 * SPEC G7 in a host app: `AgentHooksModule.forRoot` fails `init()` with a typed error naming the variable
 * (never its value) on a malformed webhook setting, and with file, line and key on a `tools:` entry that
 * selects nothing; an unset model variable is a warning on the module's logger.
 */
import { Injectable, type LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentHooksModule } from '../../../src/agent-hooks.module.js';
import type { AgentHooksModuleOptions } from '../../../src/agent-hooks.options.js';
import { AgentsConfigError } from '../../../src/config/config-error.js';
import { EnvironmentSettingError } from '../../../src/common/environment-setting-error.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';

@Injectable()
class Clock {
  @Tool({ identifier: 'clock', apiName: 'now', description: 'time', parameters: { type: 'object', properties: {} } })
  now(): string {
    return 'now';
  }

  @Tool({ identifier: 'device', apiName: 'photo', description: 'run by the client', parameters: { type: 'object', properties: {} }, deferred: true })
  photo(): string {
    return 'never runs here';
  }
}

let dir: string;
const warnings: string[] = [];
const logger: LoggerService = { log: () => undefined, error: () => undefined, warn: (message: unknown) => void warnings.push(String(message)) };

function configFile(name: string, text: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, text);
  return file;
}

/** Compiles and initialises a host app; closes it when init succeeded. */
async function init(options: AgentHooksModuleOptions): Promise<void> {
  const moduleRef = await Test.createTestingModule({ imports: [AgentHooksModule.forRoot({ database: 'sqlite::memory:', configFile: false, ...options })], providers: [Clock] }).compile();
  moduleRef.useLogger(logger);
  try {
    await moduleRef.init();
  } finally {
    await moduleRef.close();
  }
}

async function failureOf(options: AgentHooksModuleOptions): Promise<Error> {
  try {
    await init(options);
  } catch (error) {
    return error as Error;
  }
  throw new Error('init succeeded');
}

const SAVED = { ...process.env };

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'agent-hooks-g7-'));
});

afterEach(() => {
  for (const name of Object.keys(process.env)) if (!(name in SAVED)) delete process.env[name];
  Object.assign(process.env, SAVED);
  warnings.length = 0;
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('G7 fail fast at module init', () => {
  it('G7: a malformed AGENT_HOOKS_WEBHOOK_SECRET fails app.init() with a typed error naming the variable, never the value', async () => {
    process.env.AGENT_HOOKS_WEBHOOK_SECRET = 'g7-not-base64-secret!!';
    const error = await failureOf({});
    expect(error).toBeInstanceOf(EnvironmentSettingError);
    expect((error as EnvironmentSettingError).code).toBe('configuration');
    expect((error as EnvironmentSettingError).variable).toBe('AGENT_HOOKS_WEBHOOK_SECRET');
    expect(error.message).toContain('AGENT_HOOKS_WEBHOOK_SECRET');
    expect(error.message).not.toContain('g7-not-base64-secret');
  });

  it('G7: a malformed webhooks.signingSecret option fails app.init() naming the option; the option overrides the variable', async () => {
    process.env.AGENT_HOOKS_WEBHOOK_SECRET = 'g7-ignored-because-the-option-is-set';
    const error = await failureOf({ webhooks: { signingSecret: 'g7 option secret' } });
    expect(error).toBeInstanceOf(EnvironmentSettingError);
    expect(error.message).toMatch(/^webhooks\.signingSecret: /);
    expect(error.message).not.toContain('g7');
    await expect(init({ webhooks: { signingSecret: `whsec_${Buffer.alloc(24, 1).toString('base64')}` } })).resolves.toBeUndefined();
  });

  it.each([
    ['QSTASH_URL', 'g7-qstash-not-a-url'],
    ['QSTASH_TOKEN', 'g7 token\twith whitespace'],
    ['AGENT_HOOKS_APP_URL', 'g7-relative/app'],
  ])('G7: a malformed %s fails app.init() naming the variable', async (variable, value) => {
    process.env[variable] = value;
    const error = await failureOf({});
    expect(error).toBeInstanceOf(EnvironmentSettingError);
    expect(error.message).toMatch(new RegExp(`^${variable}: `));
    expect(error.message).not.toContain('g7');
  });

  it('G7: a malformed AGENT_HOOKS_WEBHOOK_ALLOW_NETWORKS fails the start naming the variable and the entry, never the value', async () => {
    process.env.AGENT_HOOKS_WEBHOOK_ALLOW_NETWORKS = '127.0.0.0/8,g7-not-a-cidr';
    const error = await failureOf({});
    expect((error as { code?: unknown }).code).toBe('configuration');
    expect(error.message).toContain('AGENT_HOOKS_WEBHOOK_ALLOW_NETWORKS');
    expect(error.message).toContain('entry 2');
    expect(error.message).not.toContain('g7');
  });

  it('G7: a tools entry that selects nothing is a config error with file, line, key and the entry itself (app.init() fails)', async () => {
    const file = configFile(
      'selects-nothing',
      `system: t
models:
  m: { provider: scripted, script: [] }
mcpServers:
  kb: { url: "http://127.0.0.1:1/mcp" }
clientTools:
  browser/open: { description: "opens a page", parameters: { type: object } }
agents:
  assistant:
    model: m
    tools: [ "clock/now", "device/*", "browser/*", "kb/*", "mcp:kb", "agents/call", "*" ]
  typo:
    model: m
    tools:
      - "clock/nwo"
      - "clok/*"
`,
    );
    const error = await failureOf({ configFile: file });
    expect(error).toBeInstanceOf(AgentsConfigError);
    expect((error as AgentsConfigError).issues.map((issue) => `${issue.file}:${issue.line} ${issue.path}`)).toEqual([
      `${file}:15 agents.typo.tools[0]`,
      `${file}:16 agents.typo.tools[1]`,
    ]);
    // The entry itself is named: the typo is found by reading it.
    expect(error.message).toContain(`${file}:15 agents.typo.tools[0] "clock/nwo": selects no tool`);
    expect(error.message).toContain(`${file}:16 agents.typo.tools[1] "clok/*": selects no tool`);
  });

  it('G7: an unset model variable is a warning naming the variable on the module logger; init succeeds', async () => {
    delete process.env.G7_UNSET_KEY;
    process.env.G7_SET_BASE_URL = 'http://127.0.0.1:1/v1';
    const file = configFile(
      'unset-variable',
      `system: t
models:
  gpt: { provider: openai, model: gpt-4o-mini, apiKeyEnv: G7_UNSET_KEY, baseUrlEnv: G7_SET_BASE_URL }
agents:
  assistant: { model: gpt, tools: [ "clock/now" ] }
`,
    );
    await init({ configFile: file });
    expect(warnings).toEqual([expect.stringMatching(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3 models\\.gpt\\.apiKeyEnv: G7_UNSET_KEY is not set`))]);
    expect(warnings.join('\n')).not.toContain('127.0.0.1');
  });
});
