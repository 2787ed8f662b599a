/**
 * Restart and resume and the L5 / P6 regression cases by name: an operation waiting for
 * approval or a deferred result survives its process; a new app on the same database resumes it with the
 * caller hooks restored in order from the database (L2) and the environment hooks of the **current**
 * environment (L1, L3).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable } from '@nestjs/common';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { OnHook, type AfterToolCallEvent } from '../../../src/index.js';
import { bootRuntime, deferred, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { startReceiver, type LoopbackReceiver } from '../../unit/webhooks/loopback-receiver.js';
import { HUMAN_LOOP_CONFIG, HumanLoopTools, executions, untilOperation, waiting } from '../human-loop/human-loop-kit.js';
import { AlreadyCompletedError } from '../../../src/index.js';
import { eventually } from '../../support/eventually.js';

const ENV_VARS = ['AGENT_HOOK_WEBHOOK_URL', 'AGENT_HOOK_WEBHOOK_TOKEN', 'AGENT_HOOK_WEBHOOK_EVENTS', 'AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING', 'AGENT_HOOK_WEBHOOK_ON_ERROR'];
const WEBHOOKS = { allowNetworks: ['127.0.0.1/32'] };

/** In-process handlers of the first app: they die with it (W3). */
const handlerCalls: string[] = [];
@Injectable()
class FirstAppOnly {
  @OnHook('afterToolCall')
  seen(event: AfterToolCallEvent) {
    handlerCalls.push(event.operationId);
  }
}

let receiver: LoopbackReceiver;
let dir: string;
let database: string;
const apps: RuntimeApp[] = [];
/** Each path answers with the next queued body (none: 204). */
const queued = new Map<string, string[]>();

function answer(path: string) {
  return (req: IncomingMessage, res: ServerResponse) => {
    req.on('end', () => {
      const body = queued.get(path)?.shift();
      if (body === undefined) res.writeHead(204).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  };
}

function setEnvironmentHook(path: string): void {
  process.env.AGENT_HOOK_WEBHOOK_URL = receiver.url(path);
  process.env.AGENT_HOOK_WEBHOOK_TOKEN = 'env-token';
  process.env.AGENT_HOOK_WEBHOOK_EVENTS = 'afterToolCall';
  process.env.AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING = 'toolCall';
  process.env.AGENT_HOOK_WEBHOOK_ON_ERROR = 'block';
}

function removeEnvironmentHook(): void {
  for (const name of ENV_VARS) delete process.env[name];
}

const callerControl = () => [
  { id: 'caller-policy', type: 'afterToolCall' as const, matcher: '^fs/', webhook: { url: receiver.url('/caller'), responseHandling: 'toolCall' as const, onError: 'block' as const } },
  { id: 'caller-note', type: 'afterHumanIntervention' as const, webhook: { url: receiver.url('/note') } },
];
const browserControl = () => [
  { id: 'browser-policy', type: 'afterToolCall' as const, matcher: '^browser/', webhook: { url: receiver.url('/caller'), responseHandling: 'toolCall' as const, onError: 'block' as const } },
];

async function boot(withHandlers = false): Promise<RuntimeApp> {
  const app = await bootRuntime({ config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools, ...(withHandlers ? [FirstAppOnly] : [])], database: `sqlite:${database}`, webhooks: WEBHOOKS });
  apps.push(app);
  return app;
}

async function closeAll(): Promise<void> {
  while (apps.length > 0) await apps.pop()!.close();
}

const requestsTo = (path: string) => receiver.requests.filter((r) => r.path === path);

beforeAll(async () => {
  receiver = await startReceiver({ '/caller': answer('/caller'), '/note': answer('/note'), '/env': answer('/env'), '/env2': answer('/env2') });
});
afterAll(() => receiver.close());
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agent-hooks-restart-'));
  database = join(dir, 'db.sqlite');
  receiver.requests.length = 0;
  queued.clear();
  handlerCalls.length = 0;
  executions.write = 0;
  removeEnvironmentHook();
});
afterEach(async () => {
  removeEnvironmentHook();
  await closeAll();
  rmSync(dir, { recursive: true, force: true });
});

describe('restart and resume', () => {
  it('L2, L1, W3: run → waiting → close the app → a new app on the same file approves → completes with the caller webhook enforced and the current env hook applied', async () => {
    const first = await boot(true);
    const { operationId } = await first.runtime.execAgent({ agentId: 'writer', prompt: 'write', hooks: callerControl() });
    await untilOperation(first.store, operationId, waiting);
    await first.close();
    apps.length = 0;

    setEnvironmentHook('/env');
    const second = await boot();
    queued.set('/caller', [JSON.stringify({ decision: 'allow' })]);
    queued.set('/env', [JSON.stringify({ decision: 'deny', reason: 'env policy says no' })]);
    const [pending] = await second.store.interventions(operationId);
    await second.runtime.approve(operationId, pending!.toolCallId);
    const result = await within(second.runtime.result(operationId), 'the resumed operation');
    expect(result.reason).toBe('done');
    expect(executions.write).toBe(1);
    // Caller policy restored from the database first, then the current environment hook, once (L3).
    expect(requestsTo('/caller')).toHaveLength(1);
    expect(requestsTo('/env')).toHaveLength(1);
    const callerAt = receiver.requests.findIndex((r) => r.path === '/caller');
    const envAt = receiver.requests.findIndex((r) => r.path === '/env');
    expect(callerAt).toBeLessThan(envAt);
    expect(handlerCalls).toEqual([]); // the first app's handler is gone with it
    // The decision itself is reported to the restored caller hooks, before the tool chain.
    expect(requestsTo('/note')).toHaveLength(1);
    expect(receiver.requests.findIndex((r) => r.path === '/note')).toBeLessThan(callerAt);
    const tool = (await second.store.messages(operationId)).find((m) => m.role === 'tool');
    expect(tool).toMatchObject({ content: 'env policy says no', error: 'hook_denied' });
  });

  it('L5: persisted caller hooks are still enforced after an environment hook is removed during the approval', async () => {
    setEnvironmentHook('/env');
    const app = await boot();
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'writer', prompt: 'write', hooks: callerControl() });
    await untilOperation(app.store, operationId, waiting);
    removeEnvironmentHook();
    queued.set('/caller', [JSON.stringify({ decision: 'deny', reason: 'caller still says no' })]);
    const [pending] = await app.store.interventions(operationId);
    await app.runtime.approve(operationId, pending!.toolCallId);
    await within(done, 'done');
    expect(requestsTo('/env')).toHaveLength(0); // removed: it no longer controls later results (L3)
    expect(requestsTo('/caller')).toHaveLength(1);
    expect((await app.store.messages(operationId)).find((m) => m.role === 'tool')).toMatchObject({ content: 'caller still says no', error: 'hook_denied' });
  });

  it('L5: an environment hook removed during the approval: with no matching control the result is allowed', async () => {
    setEnvironmentHook('/env');
    const app = await boot();
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'writer', prompt: 'write' });
    await untilOperation(app.store, operationId, waiting);
    removeEnvironmentHook();
    const [pending] = await app.store.interventions(operationId);
    await app.runtime.approve(operationId, pending!.toolCallId);
    expect((await within(done, 'done')).content).toBe('wrote: written /tmp/report.txt');
    expect(requestsTo('/env')).toHaveLength(0);
  });

  it('L5: an environment hook added during the approval controls the result', async () => {
    const app = await boot();
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'writer', prompt: 'write' });
    await untilOperation(app.store, operationId, waiting);
    setEnvironmentHook('/env2');
    queued.set('/env2', [JSON.stringify({ decision: 'deny' })]);
    const [pending] = await app.store.interventions(operationId);
    await app.runtime.approve(operationId, pending!.toolCallId);
    await within(done, 'done');
    expect((await app.store.messages(operationId)).find((m) => m.role === 'tool')).toMatchObject({ content: 'Blocked by afterToolCall hook.', error: 'hook_denied' });
  });

  it('L5: environment hooks changed after the run snapshot expired (restart): the new process reads only its current environment', async () => {
    setEnvironmentHook('/env');
    const first = await boot();
    const { operationId } = await first.runtime.execAgent({ agentId: 'browser', prompt: 'open', hooks: browserControl() });
    await untilOperation(first.store, operationId, waiting);
    await first.close();
    apps.length = 0;
    setEnvironmentHook('/env2');
    const second = await boot();
    const [item] = await second.store.interventions(operationId);
    await second.runtime.completeDeferred(operationId, item!.toolCallId, { content: 'page', success: true });
    await within(second.runtime.result(operationId), 'done');
    expect(requestsTo('/env')).toHaveLength(0); // never restored from the earlier environment
    expect(requestsTo('/env2')).toHaveLength(1);
    // P3: the caller policy was restored through the operation's id, and ran before the environment hook.
    expect(requestsTo('/caller')).toHaveLength(1);
    expect(receiver.requests.findIndex((r) => r.path === '/caller')).toBeLessThan(receiver.requests.findIndex((r) => r.path === '/env2'));
  });

  it('L5: publishing without review markers: an allowed result is stored as it is, a denial with its verdict only', async () => {
    const app = await boot();
    queued.set('/caller', [JSON.stringify({ decision: 'allow' })]);
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'writer', prompt: 'write', hooks: callerControl() });
    await untilOperation(app.store, operationId, waiting);
    const [pending] = await app.store.interventions(operationId);
    await app.runtime.approve(operationId, pending!.toolCallId);
    await within(done, 'done');
    const tool = (await app.store.messages(operationId)).find((m) => m.role === 'tool')!;
    expect(tool.content).toBe('written /tmp/report.txt');
    expect(tool.state).toBeUndefined();
    expect(tool.error).toBeUndefined();
    expect(JSON.stringify(tool)).not.toMatch(/pending|review|allowed|blocked/i);
  });

  it('P6: duplicate callbacks after the policy was removed keep the first (denied) result', async () => {
    setEnvironmentHook('/env');
    queued.set('/env', [JSON.stringify({ decision: 'deny', reason: 'first policy' })]);
    const app = await boot();
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'browser', prompt: 'open' });
    await untilOperation(app.store, operationId, waiting);
    const [item] = await app.store.interventions(operationId);
    await app.runtime.completeDeferred(operationId, item!.toolCallId, { content: 'first', success: true });
    removeEnvironmentHook();
    await expect(app.runtime.completeDeferred(operationId, item!.toolCallId, { content: 'second', success: true })).rejects.toBeInstanceOf(AlreadyCompletedError);
    await within(done, 'done');
    const tools = (await app.store.messages(operationId)).filter((m) => m.role === 'tool');
    expect(tools).toEqual([expect.objectContaining({ content: 'first policy', error: 'hook_denied' })]);
  });

  it('P6: replies staged while hooks run: nothing is published until the after-control answers', async () => {
    const release = deferred();
    receiver.route('/slow', (req, res) => {
      req.on('end', () => void release.promise.then(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"decision":"allow"}')));
    });
    const app = await boot();
    const hooks = [{ id: 'slow', type: 'afterToolCall' as const, webhook: { url: receiver.url('/slow'), responseHandling: 'toolCall' as const } }];
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'browser', prompt: 'open', hooks });
    await untilOperation(app.store, operationId, waiting);
    const [item] = await app.store.interventions(operationId);
    const completing = app.runtime.completeDeferred(operationId, item!.toolCallId, { content: 'staged', success: true });
    await eventually(() => receiver.requests.some((r) => r.path === '/slow'), 'the slow receiver to have the request');
    expect((await app.store.messages(operationId)).filter((m) => m.role === 'tool')).toEqual([]);
    expect(await app.store.placeholderState(operationId, item!.toolCallId)).toBe('empty');
    release.resolve();
    await completing;
    await within(done, 'done');
    expect((await app.store.messages(operationId)).filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['staged']);
  });
});
