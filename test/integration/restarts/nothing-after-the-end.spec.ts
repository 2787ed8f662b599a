/**
 * SPEC G5 on both databases: once an operation is completed (a cancel included), a deferred result, an
 * approval or a rejection publishes nothing and is `OperationCompletedError` — decided in the write's own
 * transaction, so a cancel that lands while a slow after-policy decides still wins. Concurrent duplicates
 * of one deferred result run the after-chain once at a time (claimed in the database, so across processes
 * too); the others are `AlreadyCompletedError`. The slow policy is a real loopback receiver that holds
 * its answer until the test releases it.
 */
import { runInThisContext } from 'node:vm';
import { afterEach, beforeEach, expect, it } from '@jest/globals';
import { AlreadyCompletedError, OperationCompletedError } from '../../../src/index.js';
import { MessageEntity } from '../../../src/persistence/entities/message.entity.js';
import { RuntimeDatabase } from '../../../src/persistence/runtime-database.js';
import { appDatabases, type DriverName } from '../persistence/test-databases.js';
import { bootRuntime, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { HUMAN_LOOP_CONFIG, HumanLoopTools, executions, untilOperation, waiting } from '../human-loop/human-loop-kit.js';
import { startHeldReceiver, type HeldReceiver } from '../human-loop/held-receiver.js';

const { describeEach, databaseFor } = await appDatabases('g5');

describeEach('G5 nothing after the end on %s', (driver: DriverName) => {
  let receiver: HeldReceiver;
  let apps: RuntimeApp[];

  beforeEach(async () => {
    receiver = await startHeldReceiver();
    apps = [];
  });
  afterEach(async () => {
    receiver.release({ decision: 'allow' });
    for (const app of apps) await app.close();
    await receiver.close();
  });

  const boot = async (name: string): Promise<RuntimeApp> => {
    const database = databaseFor(driver, name);
    const app = await bootRuntime({ config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools], database, webhooks: { allowNetworks: ['127.0.0.1/32'] } });
    apps.push(app);
    return app;
  };
  const slowPolicy = () => ({ id: 'slow-policy', type: 'afterToolCall' as const, webhook: { url: receiver.url, responseHandling: 'toolCall' as const, onError: 'block' as const } });
  /** Tool messages of the call, read from the messages table itself. */
  const toolRows = async (app: RuntimeApp, operationId: string, toolCallId: string) =>
    (await app.moduleRef.get(RuntimeDatabase).stores()).dataSource.getRepository(MessageEntity).findBy({ operationId, toolCallId });

  it('G5: a deferred result racing a cancel is 409 operation_completed and publishes nothing', async () => {
    const app = await boot('race');
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'browser', prompt: 'open', hooks: [slowPolicy()] });
    await untilOperation(app.store, operationId, waiting);
    const [item] = await app.store.interventions(operationId);
    const arriving = app.runtime.completeDeferred(operationId, item!.toolCallId, { content: 'late page', success: true });
    arriving.catch(() => undefined);
    // The after-policy is deciding; the operation is cancelled meanwhile.
    await receiver.untilHits(1);
    await app.runtime.cancel(operationId);
    expect(await within(done, 'cancelled')).toMatchObject({ reason: 'interrupted' });
    receiver.release({ decision: 'allow' });
    await expect(arriving).rejects.toBeInstanceOf(OperationCompletedError);
    expect(await toolRows(app, operationId, item!.toolCallId)).toEqual([]);
    expect(await app.store.placeholderState(operationId, item!.toolCallId)).toBe('empty');
    // A later result for it is refused the same way, without asking the policy again.
    await expect(app.runtime.completeDeferred(operationId, item!.toolCallId, { content: 'later', success: true })).rejects.toBeInstanceOf(OperationCompletedError);
    expect(receiver.hits()).toBe(1);
    // The store's own publish refuses it inside its transaction, whatever its caller read before.
    const message = { role: 'tool' as const, toolCallId: item!.toolCallId, content: 'x' };
    expect((await app.store.publishDeferredDurably(operationId, item!.toolCallId, { content: 'x', success: true }, message, 'anyone')).outcome).toBe('operation_completed');
    expect(await toolRows(app, operationId, item!.toolCallId)).toEqual([]);
  }, 30_000);

  it('G5: a cancel that lands while an approval\'s afterHumanIntervention notification is slow: the approved tool never runs', async () => {
    executions.write = 0;
    const app = await boot('approve-then-cancel');
    const notice = { id: 'slow-notice', type: 'afterHumanIntervention' as const, webhook: { url: receiver.url } };
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'writer', prompt: 'write', hooks: [notice] });
    await untilOperation(app.store, operationId, waiting);
    const [pending] = await app.store.interventions(operationId);
    const approving = app.runtime.approve(operationId, pending!.toolCallId);
    approving.catch(() => undefined);
    // The approval is committed and its notification is being delivered; the operation is cancelled
    // meanwhile — on PostgreSQL by another runtime on the database (another process's worth), whose cancel
    // this process learns of only from the database.
    await receiver.untilHits(1);
    const canceller = driver === 'postgres' ? await boot('approve-then-cancel') : app;
    await canceller.runtime.cancel(operationId);
    expect(await within(done, 'cancelled')).toMatchObject({ reason: 'interrupted' });
    receiver.release({});
    await approving.catch(() => undefined);
    // Closing drains whatever step the approval scheduled: it must have found the operation over.
    await app.close();
    apps.splice(apps.indexOf(app), 1);
    expect(executions.write).toBe(0);
    const reopened = await boot('approve-then-cancel');
    expect(await toolRows(reopened, operationId, pending!.toolCallId)).toEqual([]);
  }, 30_000);

  it('G5: approving or rejecting a completed operation is operation_completed', async () => {
    executions.write = 0;
    const app = await boot('decisions');
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'writer', prompt: 'write' });
    await untilOperation(app.store, operationId, waiting);
    const [pending] = await app.store.interventions(operationId);
    await app.runtime.cancel(operationId);
    await within(done, 'cancelled');
    await expect(app.runtime.approve(operationId, pending!.toolCallId)).rejects.toBeInstanceOf(OperationCompletedError);
    await expect(app.runtime.reject(operationId, pending!.toolCallId, { reason: 'no' })).rejects.toBeInstanceOf(OperationCompletedError);
    await expect(app.runtime.reject(operationId, pending!.toolCallId, { reason: 'no', continue: true })).rejects.toBeInstanceOf(OperationCompletedError);
    // Decided in the write's transaction: the store refuses it too, whatever its caller read before.
    const effects = { notify: ['afterHumanIntervention' as const], claimant: 'anyone', holdMs: 10_000 };
    expect((await app.store.decideDurably(operationId, pending!.toolCallId, { action: 'approve' }, effects)).outcome).toBe('operation_completed');
    expect((await app.store.interventions(operationId))[0]).toMatchObject({ status: 'pending' });
    expect(await toolRows(app, operationId, pending!.toolCallId)).toEqual([]);
    expect(executions.write).toBe(0);
  }, 30_000);

  it('G5: 50 concurrent duplicates of one deferred result run the after-policy once', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    // Node emits warnings on the real process; Jest's sandbox has a copy of its own that never hears them.
    const realProcess = runInThisContext('process') as NodeJS.Process;
    realProcess.on('warning', onWarning);
    try {
      // On PostgreSQL the duplicates arrive at two runtimes sharing the database (two processes' worth).
      const runtimes = driver === 'postgres' ? [await boot('duplicates'), await boot('duplicates')] : [await boot('duplicates')];
      const app = runtimes[0]!;
      const { operationId, done } = await app.runtime.execAgent({ agentId: 'browser', prompt: 'open', hooks: [slowPolicy()] });
      await untilOperation(app.store, operationId, waiting);
      const [item] = await app.store.interventions(operationId);
      let settled = 0;
      let allButOne!: () => void;
      const turnedAway = new Promise<void>((resolve) => (allButOne = resolve));
      const calls = Array.from({ length: 50 }, (_, i) => {
        const call = runtimes[i % runtimes.length]!.runtime.completeDeferred(operationId, item!.toolCallId, { content: `page ${i}`, success: true });
        void call.finally(() => ++settled === 49 && allButOne()).catch(() => undefined);
        return call;
      });
      await receiver.untilHits(1);
      // Either the 49 others are turned away while the first decides, or a second decider reached the policy.
      await Promise.race([turnedAway, receiver.untilHits(2)]);
      receiver.release({ decision: 'allow' });
      const results = await Promise.allSettled(calls);
      expect(receiver.hits()).toBe(1);
      expect(results.filter((r) => r.status === 'fulfilled').map((r) => r.value)).toEqual([{ published: true }]);
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason);
      expect(refused).toHaveLength(49);
      for (const reason of refused) expect(reason).toBeInstanceOf(AlreadyCompletedError);
      expect(await within(done, 'done')).toMatchObject({ reason: 'done' });
      expect(await toolRows(app, operationId, item!.toolCallId)).toHaveLength(1);
      // Warnings are emitted on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.name)).toEqual([]);
    } finally {
      realProcess.off('warning', onWarning);
    }
  }, 60_000);

  it('G5: one decider at a time — the claim is renewed by its holder, freed on release or when it lapses, and a lapsed decider cannot publish', async () => {
    const app = await boot('claims');
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'browser', prompt: 'open' });
    await untilOperation(app.store, operationId, waiting);
    const [item] = await app.store.interventions(operationId);
    const call = item!.toolCallId;
    expect(await app.store.claimDeferred(operationId, call, 'a', 30_000)).toBe(true);
    expect(await app.store.claimDeferred(operationId, call, 'b', 30_000)).toBe(false);
    expect(await app.store.claimDeferred(operationId, call, 'a', 30_000)).toBe(true);
    await app.store.releaseDeferred(operationId, call, 'a');
    // A claim that has already lapsed (a crashed decider) is taken over.
    expect(await app.store.claimDeferred(operationId, call, 'b', -1_000)).toBe(true);
    expect(await app.store.claimDeferred(operationId, call, 'c', 30_000)).toBe(true);
    const message = (content: string) => ({ role: 'tool' as const, toolCallId: call, content });
    expect((await app.store.publishDeferredDurably(operationId, call, { content: 'from b', success: true }, message('from b'), 'b')).outcome).toBe('already_completed');
    expect((await app.store.publishDeferredDurably(operationId, call, { content: 'from c', success: true }, message('from c'), 'c')).outcome).toBe('published');
    expect(await app.store.claimDeferred(operationId, call, 'd', 30_000)).toBe(false);
    expect((await toolRows(app, operationId, call)).map((row) => row.content)).toEqual(['from c']);
    await app.runtime.cancel(operationId);
    await within(done, 'cancelled');
  }, 30_000);
});
