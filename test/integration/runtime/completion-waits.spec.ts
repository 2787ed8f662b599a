/**
 * DESIGN §4, `done` without polling: `CompletionWaits` settles a waiter when the completion's event
 * arrives — committed in this process, or (PostgreSQL) by a second app instance on the same database,
 * through LISTEN/NOTIFY, with the safety re-check set far beyond the test so only the event can settle it.
 * However many operations are waited on, there is one subscription and at most one (unref'd) timer; the
 * re-check is the backstop for a completion whose event never came; `stop()` rejects every waiter.
 */
import { jest } from '@jest/globals';
import { Test, type TestingModule } from '@nestjs/testing';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BehaviorSubject } from 'rxjs';
import { DataSource } from 'typeorm';
import { AgentHooksModule, AgentRuntime } from '../../../src/index.js';
import { OperationEventsService } from '../../../src/persistence/operation-events.service.js';
import { OperationStore } from '../../../src/persistence/operation.store.js';
import type { RuntimeDatabase } from '../../../src/persistence/runtime-database.js';
import { CompletionWaits } from '../../../src/runtime/completion-waits.js';
import { OPERATION_EVENTS, type OperationEvents } from '../../../src/runtime/operation-events.port.js';
import { RuntimeShuttingDownError } from '../../../src/runtime/runtime-errors.js';
import { RUNTIME_STORE, type RuntimeStore } from '../../../src/runtime/runtime-store.port.js';
import { appDatabases, driverSuites, postgresDatabaseOption, useTestDatabase, type DriverName } from '../persistence/test-databases.js';
import { eventually } from '../../support/eventually.js';
import { openHostDatabase } from './host-data-source.js';
import { HUMAN_LOOP_CONFIG, HumanLoopTools } from '../human-loop/human-loop-kit.js';
import { within } from './runtime-test-kit.js';

const describeEachDriver = await driverSuites();
const databases = await appDatabases('completion-waits');

/** A safety re-check no test waits for: only an event can settle a waiter in time. */
const NEVER_MS = 3_600_000;

const realSetTimeout = setTimeout;
const realSetInterval = setInterval;
/** Resolves at the app's first `resync`: its listening connection is in place (LISTEN ran). */
function listening(app: { moduleRef: TestingModule }): Promise<void> {
  return new Promise((resolve) => {
    const subscription = app.moduleRef.get<OperationEvents>(OPERATION_EVENTS).events$.subscribe((signal) => {
      if (signal.kind !== 'resync') return;
      subscription.unsubscribe();
      resolve();
    });
  });
}

const activeTimeouts = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;

describeEachDriver('CompletionWaits on the stores of %s', (driver) => {
  const db = useTestDatabase(driver);
  let operations: OperationStore;
  let events: OperationEventsService;
  const store = { completedAmong: (ids: readonly string[]) => operations.completedAmong(ids) } as unknown as RuntimeStore;

  beforeAll(() => {
    operations = new OperationStore(db.handle);
    events = new OperationEventsService({ opened$: new BehaviorSubject(db.handle), current: undefined } as unknown as RuntimeDatabase);
  });
  afterAll(() => events?.close());

  const newOperation = async () => (await operations.create({ agentId: 'a', prompt: 'go' })).operation.id;

  it('DESIGN §4 events: the completion event settles a waiter, with no re-check in between', async () => {
    const waits = new CompletionWaits(events, store, { leaseMs: 10_000, reconcileEveryMs: 5_000, recheckMs: NEVER_MS });
    const id = await newOperation();
    let settled = false;
    const waiting = waits.whenCompleted(id).then(() => (settled = true));
    await eventually(() => waits.watching === 1, 'waits.watching === 1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    await operations.complete(id, 'done');
    await within(waiting, 'the waiter');
    expect(waits.watching).toBe(0);
    waits.stop();
  });

  it('DESIGN §4 events: an operation already completed settles at once', async () => {
    const waits = new CompletionWaits(events, store, { leaseMs: 10_000, reconcileEveryMs: 5_000, recheckMs: NEVER_MS });
    const id = await newOperation();
    await operations.complete(id, 'done');
    await within(waits.whenCompleted(id), 'the waiter');
    waits.stop();
  });

  it('DESIGN §4 events: the safety re-check settles a completion whose event never came', async () => {
    const waits = new CompletionWaits(events, store, { leaseMs: 10_000, reconcileEveryMs: 5_000, recheckMs: 50 });
    const id = await newOperation();
    const waiting = waits.whenCompleted(id);
    // Completed behind the stores' back: no event is published.
    const table = db.handle.table('agent_hooks_operations');
    await db.dataSource.query(`UPDATE ${table} SET "status" = 'completed' WHERE "id" = ${driver === 'postgres' ? '$1' : '?'}`, [id]);
    await within(waiting, 'the waiter settled by the re-check');
    waits.stop();
  });

  it('DESIGN §4 events: 1,000 waiters add no timer each (one shared re-check, none once they settled)', async () => {
    const waits = new CompletionWaits(events, store, { leaseMs: 10_000, reconcileEveryMs: 5_000, recheckMs: NEVER_MS });
    const ids: string[] = [];
    for (let i = 0; i < 1_000; i++) ids.push(await newOperation());
    const timeoutsBefore = activeTimeouts();
    // Every timer CompletionWaits creates, told apart from the database driver's and the test's own by its stack.
    const created = { timeouts: 0, intervals: 0 };
    const setTimeoutSpy = jest.spyOn(globalThis, 'setTimeout');
    const setIntervalSpy = jest.spyOn(globalThis, 'setInterval');
    // The frame that called the timer function: the first that is neither this file nor jest's mock.
    const byWaits = () => {
      const caller = (new Error().stack ?? '').split('\n').slice(1).find((line) => !line.includes('completion-waits.spec.ts') && !line.includes('jest-mock'));
      return /[/\\]completion-waits\.ts/.test(caller ?? '');
    };
    let waiting: Promise<unknown>;
    try {
      setTimeoutSpy.mockImplementation(((...args: Parameters<typeof setTimeout>) => {
        if (byWaits()) created.timeouts++;
        return realSetTimeout(...args);
      }) as typeof setTimeout);
      setIntervalSpy.mockImplementation(((...args: Parameters<typeof setInterval>) => {
        if (byWaits()) created.intervals++;
        return realSetInterval(...args);
      }) as typeof setInterval);
      waiting = Promise.all(ids.map((id) => waits.whenCompleted(id)));
      await eventually(() => waits.watching === 1_000, 'waits.watching === 1_000');
      // The batched first reads are done, and nothing was completed yet.
      await new Promise((resolve) => realSetTimeout(resolve, 50));
      expect(waits.watching).toBe(1_000);
      expect(created).toEqual({ timeouts: 0, intervals: 1 }); // the one shared re-check, none per waiter
      // Unref'd: not among what keeps the process alive (the driver's own timers come and go beside it).
      expect(activeTimeouts() - timeoutsBefore).toBeLessThan(10);
    } finally {
      setTimeoutSpy.mockRestore();
      setIntervalSpy.mockRestore();
    }
    for (const id of ids) await operations.complete(id, 'done');
    await within(waiting, '1,000 waiters');
    expect(waits.watching).toBe(0);
    waits.stop();
  }, 60_000); // 1,000 operations are created first: seconds on a loaded PostgreSQL

  it('G4: stop() rejects every waiter with RuntimeShuttingDownError, and refuses new ones', async () => {
    const waits = new CompletionWaits(events, store, { leaseMs: 10_000, reconcileEveryMs: 5_000, recheckMs: NEVER_MS });
    const first = waits.whenCompleted(await newOperation());
    const second = waits.whenCompleted(await newOperation());
    waits.stop();
    await expect(first).rejects.toBeInstanceOf(RuntimeShuttingDownError);
    await expect(second).rejects.toBeInstanceOf(RuntimeShuttingDownError);
    await expect(waits.whenCompleted(await newOperation())).rejects.toBeInstanceOf(RuntimeShuttingDownError);
    expect(waits.watching).toBe(0);
  });

  it('an aborted signal removes its waiter', async () => {
    const waits = new CompletionWaits(events, store, { leaseMs: 10_000, reconcileEveryMs: 5_000, recheckMs: NEVER_MS });
    const abort = new AbortController();
    const waiting = waits.whenCompleted(await newOperation(), { signal: abort.signal });
    abort.abort(new Error('no longer needed'));
    await expect(waiting).rejects.toThrow('no longer needed');
    expect(waits.watching).toBe(0);
    waits.stop();
  });
});

/** A real app with the approval agents, its safety re-check far beyond the test. */
async function bootApp(
  driver: DriverName,
  name: string,
  host?: DataSource,
): Promise<{ moduleRef: TestingModule; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'agent-hooks-waits-'));
  writeFileSync(join(dir, 'agents.yaml'), HUMAN_LOOP_CONFIG);
  const moduleRef = await Test.createTestingModule({
    imports: [AgentHooksModule.forRoot({ database: host ? 'host' : databases.databaseFor(driver, name), configFile: join(dir, 'agents.yaml'), recovery: { recheckMs: NEVER_MS } })],
    providers: [HumanLoopTools, ...(host ? [{ provide: DataSource, useValue: host }] : [])],
  }).compile();
  moduleRef.useLogger(false);
  await moduleRef.init();
  return {
    moduleRef,
    close: async () => {
      try {
        await moduleRef.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

databases.describeEach('CompletionWaits in a running app on %s', (driver) => {
  it('DESIGN §4 events: cancelling an operation that waits for approval settles its waiter by the event', async () => {
    const app = await bootApp(driver, 'one');
    try {
      const runtime = app.moduleRef.get(AgentRuntime);
      const waits = app.moduleRef.get(CompletionWaits);
      const { operationId, done } = await runtime.execAgent({ agentId: 'writer', prompt: 'write it' });
      const store = app.moduleRef.get<RuntimeStore>(RUNTIME_STORE);
      await eventually(async () => (await store.getOperation(operationId))?.status === 'waiting', '(await store.getOperation(operationId))?.status === \'waiting\'', 10_000);
      const waiting = waits.whenCompleted(operationId);
      await runtime.cancel(operationId);
      await within(waiting, 'the waiter after the cancel');
      await within(done, 'done');
    } finally {
      await app.close();
    }
  });

  if (driver !== 'postgres') return;

  it('DESIGN §4 events: a completion committed by a second app instance on the same PostgreSQL settles the waiter through LISTEN/NOTIFY', async () => {
    const here = await bootApp(driver, 'here');
    const there = await bootApp(driver, 'there');
    try {
      const listenerReady = listening(here);
      // The operation lives in the other instance: it waits there for approval.
      const { operationId, done } = await there.moduleRef.get(AgentRuntime).execAgent({ agentId: 'writer', prompt: 'write it' });
      const store = here.moduleRef.get<RuntimeStore>(RUNTIME_STORE);
      await eventually(async () => (await store.getOperation(operationId))?.status === 'waiting', '(await store.getOperation(operationId))?.status === \'waiting\'', 10_000);
      await within(listenerReady, 'the listening connection of the first instance');
      const waits = here.moduleRef.get(CompletionWaits);
      let settled = false;
      const waiting = waits.whenCompleted(operationId).then(() => (settled = true));
      await eventually(() => waits.watching === 1, 'waits.watching === 1');
      expect(settled).toBe(false);
      await there.moduleRef.get(AgentRuntime).cancel(operationId);
      await within(waiting, 'the waiter in the first instance (its re-check is an hour away)');
      await within(done, 'done in the second instance');
    } finally {
      await there.close();
      await here.close();
    }
    // Two app instances boot on PostgreSQL: more than jest's default 5 s on a loaded machine.
  }, 30_000);
  it("DESIGN §4 events: with database 'host', the listening connection is built from the host's DataSource and hears another instance's completion", async () => {
    const host = await openHostDatabase('postgres');
    const schema = (host.dataSource.options as { schema?: string }).schema!;
    const here = await bootApp(driver, 'host', host.dataSource);
    const dir = mkdtempSync(join(tmpdir(), 'agent-hooks-waits-'));
    writeFileSync(join(dir, 'agents.yaml'), HUMAN_LOOP_CONFIG);
    const there = await Test.createTestingModule({
      imports: [AgentHooksModule.forRoot({ database: postgresDatabaseOption(schema), configFile: join(dir, 'agents.yaml'), recovery: { recheckMs: NEVER_MS } })],
      providers: [HumanLoopTools],
    }).compile();
    there.useLogger(false);
    await there.init();
    try {
      const listenerReady = listening(here);
      const { operationId, done } = await there.get(AgentRuntime).execAgent({ agentId: 'writer', prompt: 'write it' });
      const store = here.moduleRef.get<RuntimeStore>(RUNTIME_STORE);
      await eventually(async () => (await store.getOperation(operationId))?.status === 'waiting', '(await store.getOperation(operationId))?.status === \'waiting\'', 10_000);
      await within(listenerReady, 'the listening connection of the host-DataSource app');
      const waiting = here.moduleRef.get(CompletionWaits).whenCompleted(operationId);
      await there.get(AgentRuntime).cancel(operationId);
      await within(waiting, 'the waiter of the host-DataSource app (its re-check is an hour away)');
      await within(done, 'done in the second instance');
    } finally {
      await there.close();
      await here.close();
      rmSync(dir, { recursive: true, force: true });
      // The host's DataSource stays open after our app closed (the host owns it); its teardown drops the schema.
      expect(host.dataSource.isInitialized).toBe(true);
      await host.dispose();
    }
  }, 30_000);
});
