/**
 * Issue 15 items 4 and 5 — errors a new user meets, on a real SQLite file: the runtime refuses work before
 * the app bootstrapped (instead of running without its @Tool and @OnHook methods); a database that cannot
 * open is reported once, by the caller's error; an operation that fails records and logs `{ type, summary }`
 * (summary of our own fields only); `afterStep` `toolResults[].success` is the stored outcome, never a guess
 * from the text.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { AfterStepEvent } from '../../../src/hooks/agent-events.js';
import { AgentHooksModule } from '../../../src/agent-hooks.module.js';
import { AgentRuntime } from '../../../src/runtime/agent-runtime.js';
import { RuntimeNotReadyError } from '../../../src/runtime/runtime-errors.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { operationView } from '../../../src/runtime/reading/operation-views.js';
import { RuntimeDatabase } from '../../../src/persistence/runtime-database.js';
import { bootRuntime, eventually, guardUnhandledRejections, within } from './runtime-test-kit.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

guardUnhandledRejections();

@Injectable()
class Texts {
  @Tool({ identifier: 'text', apiName: 'errorish', description: 'returns text that starts like an error', parameters: { type: 'object', properties: {} } })
  errorish(): string {
    return 'Error: is just the first word of this successful answer';
  }
}

const CONFIG = scriptedConfig({
  system: 'first-use',
  models: {
    caller: [toolCalls(call('text/errorish')), answer('done')],
    outside: [toolCalls(call('ext/run')), answer('done')],
  },
  clientTools: { 'ext/run': { description: 'runs outside', parameters: { type: 'object', properties: {} } } },
  agents: {
    caller: { model: 'caller', tools: ['text/*'] },
    outside: { model: 'outside', tools: ['ext/*'] },
  },
});

describe('the runtime before the app bootstrapped', () => {
  it('execAgent and run before app.init() throw RuntimeNotReadyError telling to call app.init() first', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-hooks-ready-'));
    writeFileSync(join(dir, 'agents.yaml'), CONFIG);
    const moduleRef = await Test.createTestingModule({
      imports: [AgentHooksModule.forRoot({ configFile: join(dir, 'agents.yaml'), database: `sqlite:${join(dir, 'db.sqlite')}` })],
      providers: [Texts],
    }).compile();
    try {
      const runtime = moduleRef.get(AgentRuntime);
      await expect(runtime.execAgent({ agentId: 'caller', prompt: 'hi' })).rejects.toBeInstanceOf(RuntimeNotReadyError);
      await expect(runtime.run('hi', { agentId: 'caller' })).rejects.toThrow(/app\.init\(\) \(or app\.listen\(\)\)/);
      await moduleRef.init();
      // Once bootstrapped the same runtime runs, with its @Tool.
      await expect(within(runtime.run('hi', { agentId: 'caller' }), 'run')).resolves.toMatchObject({ reason: 'done', content: 'done' });
    } finally {
      await moduleRef.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a database that cannot open', () => {
  it('is reported by the caller only: no stray "owed terminal sequences" warning before it', async () => {
    const app = await bootRuntime({ observe: true, config: CONFIG, providers: [Texts], database: 'postgres://127.0.0.1/test?schema=not-an-identifier' });
    try {
      await expect(app.runtime.execAgent({ agentId: 'caller', prompt: 'hi' })).rejects.toThrow(/schema/);
      await new Promise((resolve) => setImmediate(resolve));
      expect(app.logLines.filter((line) => line.includes('owed terminal'))).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

describe('afterStep toolResults[].success is the stored outcome (issue 15 item 5)', () => {
  it('a tool whose output starts with "Error: " is a success', async () => {
    const app = await bootRuntime({ observe: true, config: CONFIG, providers: [Texts] });
    try {
      const { operationId, done } = await app.runtime.execAgent({ agentId: 'caller', prompt: 'hi' });
      await within(done, 'done');
      const afterStep = app.events.find((event) => event.operationId === operationId && event.point === 'afterStep') as { payload?: { toolResults?: unknown } } | undefined;
      expect(afterStep?.payload?.toolResults).toEqual([expect.objectContaining({ success: true })]);
      const tool = (await app.store.messages(operationId)).find((message) => message.role === 'tool');
      expect(tool).toMatchObject({ content: expect.stringMatching(/^Error: /), success: true });
    } finally {
      await app.close();
    }
  });

  it('a deferred result with success: false and no "Error: " prefix is a failure', async () => {
    const app = await bootRuntime({ observe: true, config: CONFIG, providers: [Texts] });
    try {
      const { operationId, done } = await app.runtime.execAgent({ agentId: 'outside', prompt: 'hi' });
      await eventually(async () => (await app.store.interventions(operationId)).length > 0, 'the deferred call');
      const [item] = await app.store.interventions(operationId);
      await app.runtime.completeDeferred(operationId, item!.toolCallId, { content: 'the executor could not do it', success: false });
      await within(done, 'done');
      // The step that made the call (the next one only answers).
      const afterSteps = app.events.filter((event) => event.operationId === operationId && event.point === 'afterStep').map((event) => event.payload as AfterStepEvent);
      expect(afterSteps.find((event) => event.toolResults.length > 0)?.toolResults).toEqual([expect.objectContaining({ success: false })]);
    } finally {
      await app.close();
    }
  });
});

describe('a model that answers 401 (the key under another variable)', () => {
  let server: Server;
  let baseUrl: string;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'PROVIDER-BODY-DISTINCTIVE invalid key' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    process.env.FIRST_USE_BASE_URL = baseUrl;
    delete process.env.FIRST_USE_API_KEY;
  });
  afterAll(async () => {
    delete process.env.FIRST_USE_BASE_URL;
    await new Promise((resolve) => server.close(resolve));
  });

  it('the operation view shows error { type, summary } with model id, status and the unset variable; the log says the same', async () => {
    const config = `
system: first-use
models:
  remote: { provider: openai, model: first-use-model, baseUrlEnv: FIRST_USE_BASE_URL, apiKeyEnv: FIRST_USE_API_KEY }
agents:
  remote: { model: remote }
`;
    const app = await bootRuntime({ observe: true, config });
    try {
      const { operationId, done } = await app.runtime.execAgent({ agentId: 'remote', prompt: 'USER-PROMPT-DISTINCTIVE' });
      expect(await within(done, 'done')).toMatchObject({ reason: 'error' });
      const stores = await app.moduleRef.get(RuntimeDatabase).stores();
      const view = operationView((await stores.operations.get(operationId))!, []);
      const summary = 'model first-use-model answered HTTP 401 (FIRST_USE_API_KEY is not set)';
      expect(view).toMatchObject({ reason: 'error', error: { type: 'ModelError', summary } });
      expect(app.logLines).toContainEqual(expect.stringContaining(`operation ${operationId} failed: ModelError: ${summary}`));
      const everything = JSON.stringify([view, app.logLines]);
      expect(everything).not.toContain('DISTINCTIVE');
    } finally {
      await app.close();
    }
  });
});
