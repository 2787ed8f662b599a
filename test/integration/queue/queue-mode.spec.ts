/**
 * Queue mode in one process pair (DESIGN §4, issue 8 items 1–2): an API app that only schedules
 * (`worker: false`) and a worker app on the same PostgreSQL and Redis. Every step is a BullMQ job run by the
 * worker; `done` settles in the API app from the database; approvals and deferred completions resume the
 * operation by enqueuing its next step; caller webhooks are restored on the worker (W1, W3); in-process
 * handlers given to `execAgent` stay where they were registered.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { DATABASE_URL, postgresDatabaseOption, uniqueSchemaName } from '../persistence/test-databases.js';
import { OperationReconciler } from '../../../src/runtime/operation-reconciler.js';
import { bootRuntime, eventually, pointsOf, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { startReceiver, type LoopbackReceiver } from '../../unit/webhooks/loopback-receiver.js';
import { HUMAN_LOOP_CONFIG, HumanLoopTools, executions, untilOperation, waiting } from '../human-loop/human-loop-kit.js';
import { REDIS_URL, dropPrefix, fastQueue, queueSuite, uniquePrefix, untilStepQueueIdle } from './queue-kit.js';

// Probed at collection time: without PostgreSQL or Redis the tests show as skipped (a failure under CI=true).
const describeWithServices = await queueSuite('queue/queue-mode.spec.ts', 'queue mode (an API app and a worker app)');

const schema = uniqueSchemaName();
const prefix = uniquePrefix();
let api: RuntimeApp;
let worker: RuntimeApp;
let receiver: LoopbackReceiver;

// Top-level hooks run only when the describe below is not skipped.
beforeAll(async () => {
  receiver = await startReceiver({ '/notify': (req, res) => req.on('end', () => res.writeHead(204).end()) });
  const database = postgresDatabaseOption(schema);
  const common = { config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools], database, webhooks: { allowNetworks: ['127.0.0.1/32'] } };
  api = await bootRuntime({ observe: true, ...common, module: { mode: 'queue', redis: REDIS_URL, queue: fastQueue(prefix, { worker: false }) } });
  worker = await bootRuntime({ observe: true, ...common, module: { mode: 'queue', redis: REDIS_URL, queue: fastQueue(prefix) } });
}, 60_000);

afterAll(async () => {
  await worker?.close();
  await api?.close();
  await receiver?.close();
  await dropPrefix(prefix);
  const admin = new DataSource({ type: 'postgres', url: DATABASE_URL, poolSize: 1 });
  await admin.initialize();
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => admin.destroy());
}, 60_000);

describeWithServices('queue mode', () => {
  it('DESIGN §4: steps run on the worker; done settles in the API process; W1/W3: the caller webhook fires from the worker, the handler stays in the API process', async () => {
    const handled: string[] = [];
    const { operationId, done } = await api.runtime.execAgent({
      agentId: 'batch',
      prompt: 'x',
      hooks: [
        { id: 'notify', type: 'afterToolCall', webhook: { url: receiver.url('/notify') } },
        { id: 'local', type: 'afterToolCall', handler: (event) => void handled.push(event.operationId) },
      ],
    });
    await untilOperation(api.store, operationId, waiting);
    // The step ran on the worker, not here.
    expect(pointsOf(worker.events, operationId)).toContain('beforeStep');
    expect(pointsOf(api.events, operationId, ['beforeStep'])).toEqual([]);
    const pending = await api.store.interventions(operationId);
    await api.runtime.approve(operationId, pending[0]!.toolCallId);
    await api.runtime.reject(operationId, pending[1]!.toolCallId, { continue: true, reason: 'skip b' });
    const result = await within(done, 'done in the API process', 30_000);
    expect(result).toMatchObject({ reason: 'done', content: 'done: skip b' });
    expect(receiver.requests.filter((r) => r.path === '/notify').length).toBeGreaterThanOrEqual(2);
    expect(handled).toEqual([]); // handlers given to execAgent live in the API process only (W3)
    // `done` here follows the completion event, which the worker commits just before it runs the terminal
    // sequence: across processes `done` may settle first.
    await eventually(() => pointsOf(worker.events, operationId, ['onComplete']).length > 0, "the worker's onComplete");
    expect(pointsOf(worker.events, operationId, ['onComplete'])).toEqual(['onComplete']);
  }, 40_000);

  it('issue 8 item 1: a deferred completion in the API process resumes the operation on the worker', async () => {
    const { operationId, done } = await api.runtime.execAgent({ agentId: 'browser', prompt: 'x' });
    await untilOperation(api.store, operationId, waiting);
    const [item] = await api.store.interventions(operationId);
    await api.runtime.completeDeferred(operationId, item!.toolCallId, { content: 'page', success: true });
    expect(await within(done, 'done', 30_000)).toMatchObject({ reason: 'done', content: 'page: page' });
  }, 40_000);

  it('issue 8 item 1: cancel from the API process ends a running operation once, with one onComplete', async () => {
    executions.now = 0;
    const { operationId, done } = await api.runtime.execAgent({ agentId: 'compacting', prompt: 'long '.repeat(40) });
    await api.runtime.cancel(operationId);
    expect((await within(done, 'done', 30_000)).reason).toBe('interrupted');
    // Nothing can add a terminal sequence once no step job is left and a reconciler pass (which runs the
    // terminal sequences a worker owed) has run: only then count.
    await untilStepQueueIdle(prefix);
    await worker.moduleRef.get(OperationReconciler).reconcile();
    const completes = [...pointsOf(api.events, operationId, ['onComplete']), ...pointsOf(worker.events, operationId, ['onComplete'])];
    expect(completes).toEqual(['onComplete']);
  }, 40_000);
});
