/**
 * Edges of approvals and deferred results: the decorator forms (`requiresApproval`, `deferred`), a caller-
 * policy read error that propagates (L4), a control that cannot reconstruct the call failing closed, and
 * `done` of the starting process settling when another app on the same database finishes the operation.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { RuntimeDatabase } from '../../../src/persistence/runtime-database.js';
import { bootRuntime, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { startReceiver, type LoopbackReceiver } from '../../unit/webhooks/loopback-receiver.js';
import { HUMAN_LOOP_CONFIG, HumanLoopTools, executions, untilOperation, waiting } from './human-loop-kit.js';
import { until } from '../../support/eventually.js';

const apps: RuntimeApp[] = [];
let receiver: LoopbackReceiver | undefined;
let dir: string | undefined;

afterEach(async () => {
  while (apps.length > 0) await apps.pop()!.close();
  await receiver?.close();
  receiver = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

async function boot(database?: string): Promise<RuntimeApp> {
  // Two DataSources on one SQLite file do not share events (SQLite serves one process, DESIGN §4): the
  // first app learns of the second's commits from its backstop re-check, made short here.
  const shared = database ? { database, module: { recovery: { recheckMs: 200 } } } : {};
  const app = await bootRuntime({ config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools], webhooks: { allowNetworks: ['127.0.0.1/32'] }, ...shared });
  apps.push(app);
  return app;
}

describe('intervention edges', () => {
  it('A3, DESIGN §8: @Tool({ requiresApproval }) waits for a human and @Tool({ deferred }) for an outside executor', async () => {
    executions.write = 0;
    const app = await boot();
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'decorated', prompt: 'x' });
    await untilOperation(app.store, operationId, waiting);
    const [approval] = await app.store.interventions(operationId);
    expect(approval).toMatchObject({ identifier: 'payments', apiName: 'refund', kind: 'approval', status: 'pending' });
    await app.runtime.approve(operationId, approval!.toolCallId);
    await untilOperation(app.store, operationId, (op) => op.status === 'waiting' && op.version > 0);
    const items = await untilInterventions(app, operationId, 2);
    const deferredCall = items.find((i) => i.kind === 'deferred');
    expect(deferredCall).toMatchObject({ identifier: 'device', apiName: 'photo', status: 'pending' });
    await app.runtime.completeDeferred(operationId, deferredCall!.toolCallId, { content: 'photo.jpg', success: true });
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: 'photo.jpg' });
    expect(executions.write).toBe(1);
  });

  it('L4: a storage error while reading the caller policy propagates and publishes nothing; a retry then succeeds', async () => {
    const app = await boot();
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'browser', prompt: 'x' });
    await untilOperation(app.store, operationId, waiting);
    const [item] = await app.store.interventions(operationId);
    const failure = new Error('caller hooks table unreadable');
    const spy = jest.spyOn(app.store, 'callerHooks').mockRejectedValueOnce(failure);
    await expect(app.runtime.completeDeferred(operationId, item!.toolCallId, { content: 'page', success: true })).rejects.toBe(failure);
    spy.mockRestore();
    expect(await app.store.placeholderState(operationId, item!.toolCallId)).toBe('empty');
    expect((await app.store.messages(operationId)).filter((m) => m.role === 'tool')).toEqual([]);
    await app.runtime.completeDeferred(operationId, item!.toolCallId, { content: 'page', success: true });
    expect((await within(done, 'done')).content).toBe('page: page');
  });

  it('L4: a configured control that cannot reconstruct the call fails closed (hook_control_error)', async () => {
    receiver = await startReceiver({ '/allow': (req, res) => req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"decision":"allow"}')) });
    const app = await boot();
    const hooks = [{ id: 'policy', type: 'afterToolCall' as const, webhook: { url: receiver.url('/allow'), responseHandling: 'toolCall' as const } }];
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'browser', prompt: 'x', hooks });
    await untilOperation(app.store, operationId, waiting);
    const [item] = await app.store.interventions(operationId);
    // The assistant message that held the call is gone (e.g. removed by hand): the call cannot be rebuilt.
    const { dataSource } = await app.moduleRef.get(RuntimeDatabase).stores();
    await dataSource.query(`DELETE FROM "agent_hooks_messages" WHERE "operation_id" = ? AND "role" = 'assistant'`, [operationId]);
    await app.runtime.completeDeferred(operationId, item!.toolCallId, { content: 'page', success: true });
    await within(done, 'done');
    const tool = (await app.store.messages(operationId)).find((m) => m.role === 'tool');
    expect(tool).toMatchObject({ content: 'hook_control_error', error: 'hook_control_error' });
    expect(receiver.requests).toHaveLength(0); // never allowed by a control that could not see the call
  });

  it('L2: done of the starting process settles when another app on the same database finishes the operation', async () => {
    dir = mkdtempSync(join(tmpdir(), 'agent-hooks-two-apps-'));
    const database = `sqlite:${join(dir, 'shared.sqlite')}`;
    const first = await boot(database);
    const second = await boot(database);
    const { operationId, done } = await first.runtime.execAgent({ agentId: 'writer', prompt: 'x' });
    await untilOperation(first.store, operationId, waiting);
    const [pending] = await second.store.interventions(operationId);
    await second.runtime.approve(operationId, pending!.toolCallId);
    expect(await within(done, 'done in the first app', 15_000)).toMatchObject({ reason: 'done', content: 'wrote: written /tmp/report.txt' });
  });

  it('A3: a failing afterHumanIntervention delivery (fallback none) is reported, and the approved run still goes on', async () => {
    receiver = await startReceiver({ '/down': (req, res) => req.on('end', () => res.writeHead(500).end()) });
    const app = await boot();
    const hooks = [{ id: 'strict-audit', type: 'afterHumanIntervention' as const, webhook: { url: receiver.url('/down'), fallback: 'none' as const } }];
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'writer', prompt: 'x', hooks });
    await untilOperation(app.store, operationId, waiting);
    const [pending] = await app.store.interventions(operationId);
    await expect(app.runtime.approve(operationId, pending!.toolCallId)).rejects.toThrow();
    expect(await within(done, 'done despite the failed delivery')).toMatchObject({ reason: 'done' });
  });
});

async function untilInterventions(app: RuntimeApp, operationId: string, count: number) {
  return until(() => app.store.interventions(operationId), (items) => items.length >= count, `${count} interventions`, 10_000);
}
