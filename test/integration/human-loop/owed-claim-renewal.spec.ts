/**
 * SPEC G3 on both databases: a decision's owed notification is claimed by its decider, and the claim is
 * renewed while the delivery runs — a webhook slower than the claim (here: held open by the receiver until
 * the test says) must not let a reconcile pass deliver the same notification a second time meanwhile.
 */
import { afterEach, beforeEach, expect, it } from '@jest/globals';
import { OwedWork } from '../../../src/runtime/owed-work.js';
import { RuntimeDatabase } from '../../../src/persistence/runtime-database.js';
import { appDatabases, type DriverName } from '../persistence/test-databases.js';
import { eventually } from '../../support/eventually.js';
import { bootRuntime, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { HUMAN_LOOP_CONFIG, HumanLoopTools, untilOperation, waiting } from './human-loop-kit.js';
import { startHeldReceiver, type HeldReceiver } from './held-receiver.js';

const { describeEach, databaseFor } = await appDatabases('owed-renewal');
const LEASE_MS = 300;

describeEach('G3 owed-notification claims are renewed on %s', (driver: DriverName) => {
  let receiver: HeldReceiver;
  let app: RuntimeApp | undefined;

  beforeEach(async () => {
    receiver = await startHeldReceiver();
  });
  afterEach(async () => {
    receiver.release({});
    await app?.close();
    await receiver.close();
  });

  it('G3: while a slow afterHumanIntervention delivery runs, its claim is renewed and a reconcile pass finds nothing to deliver', async () => {
    app = await bootRuntime({
      config: HUMAN_LOOP_CONFIG,
      providers: [HumanLoopTools],
      database: databaseFor(driver, 'renewal'),
      webhooks: { allowNetworks: ['127.0.0.1/32'] },
      // Reconcile passes are run by the test, not by a timer.
      module: { recovery: { leaseMs: LEASE_MS, reconcileEveryMs: 3_600_000 } },
    });
    const notice = { id: 'slow-notice', type: 'afterHumanIntervention' as const, webhook: { url: receiver.url, timeout: 30 } };
    const { operationId } = await app.runtime.execAgent({ agentId: 'writer', prompt: 'write', hooks: [notice] });
    await untilOperation(app.store, operationId, waiting);
    const [pending] = await app.store.interventions(operationId);
    const approving = app.runtime.approve(operationId, pending!.toolCallId);
    approving.catch(() => undefined);
    await receiver.untilHits(1);

    const owed = async () => (await (await app!.moduleRef.get(RuntimeDatabase).stores()).owed.list(operationId))[0]!;
    const first = await owed();
    expect(first.deliveredAt).toBeUndefined();
    const claimedUntil = Date.parse(first.claimedUntil!);
    // Renewed past the first claim's end while the webhook is still held (no fixed sleep: the row says so).
    await eventually(async () => Date.parse((await owed()).claimedUntil!) > claimedUntil + LEASE_MS, 'Date.parse((await owed()).claimedUntil!) > claimedUntil + LEASE_MS', 10_000);
    expect(await app.moduleRef.get(OwedWork).deliverOwedNotifications()).toBe(0);
    expect(receiver.hits()).toBe(1);

    receiver.release({});
    await approving;
    await eventually(async () => (await owed()).deliveredAt !== undefined, '(await owed()).deliveredAt !== undefined', 10_000);
    expect(receiver.hits()).toBe(1);
  }, 30_000);
});
