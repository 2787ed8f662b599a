/**
 * L2/W3: a step run by a process that did not start the operation restores the persisted caller webhooks,
 * in order, with their templates; handler functions are not restored.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test, type TestingModule } from '@nestjs/testing';
import { AgentHooksModule, HookRegistry, RunContext } from '../../../src/index.js';
import { RUNTIME_STORE, type RuntimeStore } from '../../../src/runtime/runtime-store.port.js';
import { OperationStart } from '../../../src/runtime/operation-start.js';
import { StepExecutor } from '../../../src/runtime/step-executor.js';
import { answer, scriptedConfig } from '../../support/scripted-config.js';

const CONFIG = scriptedConfig({
  system: 'restore-test',
  models: {
    quiet: [answer('hello')],
  },
  agents: {
    assistant: { model: 'quiet' },
  },
});

let dir: string;
let server: Server;
let url: string;
const received: Array<{ path: string; authorization?: string; hookType: string }> = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agent-hooks-restore-'));
  writeFileSync(join(dir, 'agents.yaml'), CONFIG);
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      received.push({ path: req.url ?? '', authorization: req.headers.authorization, hookType: (JSON.parse(body) as { hookType: string }).hookType });
      res.writeHead(204);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

async function boot(): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      AgentHooksModule.forRoot({
        database: `sqlite:${join(dir, 'db.sqlite')}`,
        configFile: join(dir, 'agents.yaml'),
        webhooks: { allowNetworks: ['127.0.0.0/8'] },
      }),
    ],
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

it('L2/W3: another process restores the persisted caller webhooks in order and resolves templates at send time', async () => {
  // "Process" A persists the operation with its caller hooks, as execAgent does, and stops.
  const first = await boot();
  const operationId = 'op-restore-1';
  await first.get<RuntimeStore>(RUNTIME_STORE).createOperation({
    id: operationId,
    agentId: 'assistant',
    prompt: 'hi',
    runContext: {},
    callerHooks: [
      { position: 0, hookId: 'first', type: 'beforeStep', webhook: { url: `${url}/first`, headers: { Authorization: 'Bearer ${RESTORE_TOKEN}' }, allowedEnvVars: ['RESTORE_TOKEN'] } },
      { position: 1, hookId: 'second', type: 'beforeStep', webhook: { url: `${url}/second` } },
    ],
  });
  await first.close();

  // "Process" B runs the step: the hooks come back from the database, the secret from its environment.
  process.env.RESTORE_TOKEN = 'token-from-b';
  const second = await boot();
  try {
    const registry = second.get(HookRegistry);
    expect(registry.hasCallerHooks(operationId)).toBe(false);
    const result = await second.get(StepExecutor).step({ operationId, runContext: new RunContext({ runId: operationId }), signal: new AbortController().signal, subAgents: second.get(OperationStart) });
    expect(result).toEqual({ terminal: 'done' });
    expect(received.filter((r) => r.hookType === 'beforeStep')).toEqual([
      { path: '/first', authorization: 'Bearer token-from-b', hookType: 'beforeStep' },
      { path: '/second', authorization: undefined, hookType: 'beforeStep' },
    ]);
    expect(registry.callerHooks(operationId, 'beforeStep').map((h) => h.id)).toEqual(['first', 'second']);
  } finally {
    delete process.env.RESTORE_TOKEN;
    await second.close();
  }
});
