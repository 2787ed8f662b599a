/**
 * SPEC G2 in local mode, in process (the SIGKILL tests with real processes are in test/e2e): the process
 * driving an operation holds its lease and renews it, so another app's reconciler on the same database
 * leaves the operation alone however often it looks; a step handed back at shutdown is taken over by the
 * next app at once. Both drivers.
 */
import { afterEach, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Tool } from '../../../src/index.js';
import { OperationEntity } from '../../../src/persistence/entities/operation.entity.js';
import { RuntimeDatabase } from '../../../src/persistence/runtime-database.js';
import { OperationReconciler } from '../../../src/runtime/operation-reconciler.js';
import { appDatabases } from '../persistence/test-databases.js';
import { bootRuntime, deferred, eventually, guardUnhandledRejections, pointsOf, within, type Deferred, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { pause } from '../../support/eventually.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

const CONFIG = scriptedConfig({
  system: 'recovery-test',
  models: {
    slow: [toolCalls(call('work/slow')), answer('worked: {{lastToolResult}}')],
  },
  agents: {
    worker: { model: 'slow', tools: ['work/*'] },
  },
});

/** The slow tool: each execution is counted and waits for the test to let it go. */
const calls = { executions: 0, returned: 0, arrived: deferred(), release: deferred() as Deferred<void> };

@Injectable()
class SlowTools {
  @Tool({ identifier: 'work', apiName: 'slow', description: 'works slowly', parameters: { type: 'object', properties: {} } })
  async slow(): Promise<string> {
    calls.executions++;
    calls.arrived.resolve();
    await calls.release.promise;
    calls.returned++;
    return 'done';
  }
}

guardUnhandledRejections();

const { describeEach, databaseFor } = await appDatabases('recovery');
const apps: RuntimeApp[] = [];
afterEach(async () => {
  calls.release.resolve();
  await Promise.all(apps.splice(0).map((app) => app.close()));
  Object.assign(calls, { executions: 0, returned: 0, arrived: deferred(), release: deferred() });
});

/**
 * Short timings, so that several leases expire while the test watches — but not so short that a loaded
 * 2-core machine starves a renewal for a whole lease (which would rightly be taken over).
 */
const RECOVERY = { leaseMs: 1_500, reconcileEveryMs: 100 };

describeEach('G2 leases and takeover on %s', (driver) => {
  const boot = async (name: string, graceMs?: number) => {
    const shutdown = graceMs !== undefined ? { shutdown: { graceMs } } : {};
    const app = await bootRuntime({ observe: true, config: CONFIG, providers: [SlowTools], database: databaseFor(driver, name), module: { recovery: RECOVERY, ...shutdown } });
    apps.push(app);
    return app;
  };

  it('G2: while one app drives an operation, the reconciler of another app on the same database leaves it alone', async () => {
    const driving = await boot('exclusive');
    const watching = await boot('exclusive');
    const { operationId, done } = await driving.runtime.execAgent({ agentId: 'worker', prompt: 'go' });
    await within(calls.arrived.promise, 'the slow call');
    // Many passes, over several lease lengths: the renewed lease keeps the operation with its driver.
    const reconciler = watching.moduleRef.get(OperationReconciler);
    for (let pass = 0; pass < 15; pass++) {
      expect(await reconciler.reconcile()).toMatchObject({ recovered: 0 });
      await pause(RECOVERY.leaseMs / 5, 'a pause between reconciler passes');
    }
    calls.release.resolve();
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: 'worked: done' });
    expect(calls.executions).toBe(1);
    expect(pointsOf(driving.events, operationId, ['onComplete'])).toEqual(['onComplete']);
    expect(pointsOf(watching.events, operationId, ['onComplete'])).toEqual([]);
  }, 30_000);

  it('G2: a process whose lease was taken over does not end the operation; it goes on under the new holder', async () => {
    const app = await boot('taken-over');
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'worker', prompt: 'go' });
    await within(calls.arrived.promise, 'the slow call');
    // Another process takes the lease (as after this one's renewals failed for a whole lease).
    const { dataSource } = await app.moduleRef.get(RuntimeDatabase).stores();
    const setLease = (leaseOwner: string, leaseUntil: string) =>
      dataSource.createQueryBuilder().update(OperationEntity).set({ leaseOwner, leaseUntil, version: () => '"version"' }).where('id = :operationId', { operationId }).execute();
    await setLease('another-process:1', new Date(Date.now() + 60_000).toISOString());
    calls.release.resolve();
    // The call returns; its publish is fenced by the lease, so nothing of it is published, and the step must
    // not end the operation (before the fix it ended it `error`, with an onComplete).
    await eventually(() => calls.returned === 1, 'the slow call to return');
    expect((await app.store.messages(operationId)).filter((m) => m.role === 'tool')).toEqual([]);
    // The other holder dies too: its lease expires and this app's reconciler takes the operation over.
    await setLease('another-process:1', new Date(Date.now() - 1_000).toISOString());
    expect(await within(done, 'done after the takeover')).toMatchObject({ reason: 'done', content: 'worked: done' });
    expect((await app.store.messages(operationId)).filter((m) => m.role === 'tool')).toHaveLength(1);
    expect(calls.executions).toBe(2);
    expect(pointsOf(app.events, operationId, ['onComplete'])).toEqual(['onComplete']);
  }, 30_000);

  it('G2 + G4: a step handed back at shutdown is taken over by the next app and runs to the end there', async () => {
    const first = await boot('handback', 0);
    const { operationId, done } = await first.runtime.execAgent({ agentId: 'worker', prompt: 'go' });
    await within(calls.arrived.promise, 'the slow call');
    // The call is cut at the end of a zero grace period: nothing is published, the step is handed back.
    await first.close().catch(() => undefined);
    apps.splice(apps.indexOf(first), 1);
    await expect(done).rejects.toMatchObject({ code: 'shutting_down' });
    calls.release.resolve();
    const next = await boot('handback');
    const result = await within(next.runtime.result(operationId), 'the operation on the next app');
    expect(result).toMatchObject({ reason: 'done', content: 'worked: done' });
    // A plain call cut by shutdown runs again after the takeover (documented in SPEC G2).
    expect(calls.executions).toBe(2);
    const tools = (await next.store.messages(operationId)).filter((m) => m.role === 'tool');
    expect(tools).toHaveLength(1);
    expect(pointsOf(next.events, operationId, ['onComplete'])).toEqual(['onComplete']);
  }, 30_000);
});
