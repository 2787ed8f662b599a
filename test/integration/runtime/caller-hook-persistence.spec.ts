/**
 * W3 / L2 / W6 / A4 through `execAgent({ hooks })` on a real SQLite file: only the webhook parts of caller
 * hooks are persisted, in registration order, with header templates as given (the environment value is
 * resolved at send time and never stored anywhere in the database); handler functions are not persisted;
 * in local mode a hook with both a handler and a webhook runs its handler only (W2); when the operation
 * ends its registrations are gone from memory (A4).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Injectable } from '@nestjs/common';
import type { AgentHook } from '../../../src/index.js';
import { AGENT_DIRECTORY, type AgentDirectory } from '../../../src/runtime/agent-directory.port.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { bootRuntime, guardUnhandledRejections, within, type RuntimeApp } from './runtime-test-kit.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

const CONFIG = scriptedConfig({
  system: 'caller-hooks-test',
  models: {
    plain: [toolCalls(call('clock/now')), answer('It is {{lastToolResult}}.')],
    broken: [answer('never played')],
  },
  agents: {
    assistant: { model: 'plain', tools: ['clock/*'] },
    breaker: { model: 'broken' },
  },
});

const TOKEN_VALUE = 'tok-DISTINCTIVE-5ec2e7-value';

@Injectable()
class Clock {
  @Tool({ identifier: 'clock', apiName: 'now', description: 'time', parameters: { type: 'object', properties: {} } })
  now(): string {
    return '2026-11-30T00:00:00Z';
  }
}

guardUnhandledRejections();

let app: RuntimeApp;
let receiver: Server;
let base: string;
const received: Array<{ path: string; headers: IncomingHttpHeaders; body: Record<string, unknown> }> = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> });
      if (req.url === '/gate') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ decision: 'allow' }));
      } else {
        res.writeHead(204);
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  process.env.RT_CALLER_HOOK_TOKEN = TOKEN_VALUE;
  app = await bootRuntime({ config: CONFIG, providers: [Clock], webhooks: { allowNetworks: ['127.0.0.0/8'] } });
});

afterAll(async () => {
  await app?.close();
  delete process.env.RT_CALLER_HOOK_TOKEN;
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
});

describe('caller hooks given to execAgent (W3, L2, A4)', () => {
  it('persists webhook parts only, templates kept, never the env value; handlers stay in memory; nothing remains after the end', async () => {
    const handlerCalls: string[] = [];
    let registeredDuringRun: boolean | undefined;
    const hooks: AgentHook[] = [
      {
        id: 'audit',
        type: 'afterToolCall',
        webhook: {
          url: `${base}/audit`,
          headers: { Authorization: 'Bearer ${RT_CALLER_HOOK_TOKEN}', 'X-Static': 'plain' },
          allowedEnvVars: ['RT_CALLER_HOOK_TOKEN'],
          body: { source: 'runtime-test' },
        },
      },
      {
        id: 'local-only',
        type: 'beforeStep',
        handler: (event) => {
          handlerCalls.push('local-only');
          registeredDuringRun = app.registry.hasCallerHooks(event.operationId);
        },
      },
      { id: 'both', type: 'onComplete', handler: () => void handlerCalls.push('both'), webhook: { url: `${base}/both` } },
      { id: 'gate', type: 'beforeToolCall', matcher: '^clock/', webhook: { url: `${base}/gate`, responseHandling: 'toolCall', onError: 'block', timeout: 10 } },
    ];
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'assistant', prompt: 'What time is it?', hooks });
    const result = await within(done, 'done');
    expect(result).toMatchObject({ reason: 'done', content: 'It is 2026-11-30T00:00:00Z.' });

    // L2/W3: as persisted, read through the runtime's store port: webhook hooks in registration order
    // (positions are dense: the handler-only hook has no row).
    const stored = await app.store.callerHooks(operationId);
    expect(stored).toEqual([
      {
        position: 0,
        hookId: 'audit',
        type: 'afterToolCall',
        webhook: expect.objectContaining({
          url: `${base}/audit`,
          headers: { Authorization: 'Bearer ${RT_CALLER_HOOK_TOKEN}', 'X-Static': 'plain' },
          allowedEnvVars: ['RT_CALLER_HOOK_TOKEN'],
          body: { source: 'runtime-test' },
        }),
      },
      { position: 1, hookId: 'both', type: 'onComplete', webhook: expect.objectContaining({ url: `${base}/both` }) },
      { position: 2, hookId: 'gate', type: 'beforeToolCall', matcher: '^clock/', webhook: expect.objectContaining({ url: `${base}/gate`, responseHandling: 'toolCall', onError: 'block' }) },
    ]);
    for (const hook of stored) expect(Object.keys(hook)).not.toContain('handler');
    expect(JSON.stringify(stored)).not.toContain(TOKEN_VALUE);

    // W6: the template was resolved at send time, from allowedEnvVars only.
    const audit = received.filter((r) => r.path === '/audit');
    expect(audit).toHaveLength(1);
    expect(audit[0]!.headers.authorization).toBe(`Bearer ${TOKEN_VALUE}`);
    expect(audit[0]!.headers['x-static']).toBe('plain');
    expect(audit[0]!.body).toMatchObject({ hookId: 'audit', hookType: 'afterToolCall', source: 'runtime-test' });
    expect(received.filter((r) => r.path === '/gate')).toHaveLength(1);
    // W2: local dispatch runs the handler of a hook that has both; its webhook is not called.
    expect(handlerCalls).toEqual(['local-only', 'local-only', 'both']);
    expect(received.filter((r) => r.path === '/both')).toEqual([]);

    // No secret anywhere in the database files (DESIGN §5, S2).
    const files = readdirSync(app.dir).filter((name) => name.startsWith('db.sqlite'));
    expect(files.length).toBeGreaterThan(0);
    for (const name of files) expect(readFileSync(join(app.dir, name)).includes(TOKEN_VALUE)).toBe(false);

    // A4: registered while running, gone once the operation ended.
    expect(registeredDuringRun).toBe(true);
    expect(app.registry.hasCallerHooks(operationId)).toBe(false);
    expect(app.registry.operationCount).toBe(0);
  });

  it('A4 holds for an operation that fails too, and hook ids are not de-duplicated across operations (L3)', async () => {
    // The 'broken' model throws: that operation ends with reason error.
    const model = app.moduleRef.get<AgentDirectory>(AGENT_DIRECTORY).agent('breaker')!.model;
    model.complete = async () => {
      throw new RangeError('model down');
    };
    const hooks = (): AgentHook[] => [{ id: 'same-id', type: 'onComplete', webhook: { url: `${base}/done` } }];
    const first = await app.runtime.execAgent({ agentId: 'assistant', prompt: 'one', hooks: hooks() });
    const second = await app.runtime.execAgent({ agentId: 'breaker', prompt: 'two', hooks: hooks() });
    const results = await within(Promise.all([first.done, second.done]), 'both operations');
    expect(results.map((r) => r.reason)).toEqual(['done', 'error']);
    expect((await app.store.callerHooks(first.operationId)).map((h) => h.hookId)).toEqual(['same-id']);
    expect((await app.store.callerHooks(second.operationId)).map((h) => h.hookId)).toEqual(['same-id']);
    const done = received.filter((r) => r.path === '/done');
    expect(done.map((r) => r.body.operationId).sort()).toEqual([first.operationId, second.operationId].sort());
    expect(app.registry.hasCallerHooks(first.operationId)).toBe(false);
    expect(app.registry.hasCallerHooks(second.operationId)).toBe(false);
    expect(app.registry.operationCount).toBe(0);
  });
});
