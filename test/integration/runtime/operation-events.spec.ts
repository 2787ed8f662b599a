/**
 * DESIGN §4, events instead of polling: the stores publish each committed change on `OperationEvents`, in
 * commit order, never for a rolled-back transaction; on PostgreSQL a second DataSource (another process, as
 * far as the database can tell) hears them through LISTEN/NOTIFY on its one listening connection, and no
 * process hears its own twice. The listener reconnects after its connection dropped and signals `resync`,
 * ignores malformed payloads, and ends with `close()`. A process that follows single operations only (a queue
 * worker hears every worker's commits) parses no payload that names none of them.
 */
import { jest } from '@jest/globals';
import { StoreDatabase } from '../../../src/persistence/store-database.js';
import { randomBytes } from 'node:crypto';
import { BehaviorSubject } from 'rxjs';
import { DataSource } from 'typeorm';
import { createDataSourceOptions } from '../../../src/persistence/data-source-options.js';
import { OperationEventsService } from '../../../src/persistence/operation-events.service.js';
import { OperationWaitStore } from '../../../src/persistence/operation-wait.store.js';
import { OperationStore } from '../../../src/persistence/operation.store.js';
import type { RuntimeDatabase } from '../../../src/persistence/runtime-database.js';
import { StepCommitStore } from '../../../src/persistence/step-commit.store.js';
import { StatementFailpoint, updatesOperation } from '../persistence/statement-failpoint.js';
import { openAgentHooksDataSource } from '../../../src/persistence/open-data-source.js';
import type { OperationEvent, OperationEventSignal } from '../../../src/runtime/operation-events.port.js';
import { driverSuites, dropSchema, postgresDatabaseOption, uniqueSchemaName, useTestDatabase } from '../persistence/test-databases.js';
import { eventually } from '../../support/eventually.js';

const describeEachDriver = await driverSuites();

/** The service as the module builds it, on a DataSource that is already open (RuntimeDatabase opened it). */
/** The events service over a store handle, as `RuntimeDatabase` hands it the handle it built the stores on. */
function eventsOn(database: StoreDatabase): OperationEventsService {
  return new OperationEventsService({ opened$: new BehaviorSubject(database), current: undefined } as unknown as RuntimeDatabase);
}

/** Everything a service emitted: the events of the given operations (other test files share the channel) and the resyncs. */
function record(service: OperationEventsService) {
  const signals: OperationEventSignal[] = [];
  const subscription = service.events$.subscribe((signal) => signals.push(signal));
  return {
    of: (...ids: string[]): OperationEvent[] => signals.filter((s): s is OperationEvent => s.kind !== 'resync' && ids.includes(s.operationId)),
    resyncs: () => signals.filter((s) => s.kind === 'resync').length,
    stop: () => subscription.unsubscribe(),
  };
}

const brief = (events: OperationEvent[]) => events.map((e) => [e.kind, e.status ?? null, e.version ?? null].join(':'));

describeEachDriver('operation events on %s', (driver) => {
  const failpoint = new StatementFailpoint();
  const db = useTestDatabase(driver, { wrapSession: failpoint.wrap });
  /** PostgreSQL: a second DataSource on the same schema, with its own listener (another process, to the database). */
  let other: DataSource | undefined;
  /** The other side's one store handle: its stores commit through it, its listener skips its own NOTIFYs by it. */
  let otherHandle: StoreDatabase | undefined;
  let here: OperationEventsService;
  let there: OperationEventsService | undefined;
  let local: ReturnType<typeof record>;
  let remote: ReturnType<typeof record> | undefined;
  const applicationName = `agent-hooks-events-test-${randomBytes(4).toString('hex')}`;

  let operations: OperationStore;
  let commits: StepCommitStore;
  let waits: OperationWaitStore;

  beforeAll(async () => {
    operations = new OperationStore(db.handle);
    commits = new StepCommitStore(db.handle);
    waits = new OperationWaitStore(db.handle);
    here = eventsOn(db.handle);
    local = record(here);
    if (driver === 'postgres') {
      other = await new DataSource({ ...createDataSourceOptions(db.option), applicationName } as never).initialize();
      otherHandle = new StoreDatabase(other);
      there = eventsOn(otherHandle);
      remote = record(there);
      // Each listener signals resync once its LISTEN is in place.
      await eventually(() => local.resyncs() >= 1 && remote!.resyncs() >= 1, 'local.resyncs() >= 1 && remote!.resyncs() >= 1', 10_000);
    }
  });

  afterEach(() => failpoint.clear());

  afterAll(async () => {
    local?.stop();
    remote?.stop();
    await here?.close();
    await there?.close();
    if (other?.isInitialized) await other.destroy();
  });

  const newOperation = async () => (await operations.create({ agentId: 'a', prompt: 'go' })).operation;

  it('DESIGN §4 events: create, commit, pause, decision, resume and complete arrive in commit order', async () => {
    const { id } = await newOperation();
    await commits.commit({ operationId: id, expectedVersion: 1, messages: [{ role: 'assistant', content: 'calling' }], patch: { stepIndex: 1 } });
    await waits.record(id, [{ toolCallId: 'call-1', stepIndex: 1, callIndex: 0, identifier: 'fs', apiName: 'write', args: {}, kind: 'approval' }]);
    expect(await waits.pause(id)).toBe(true);
    // The decision and "runnable again" commit together (G3).
    const effects = { notify: ['afterHumanIntervention' as const], claimant: 'decider', holdMs: 10_000 };
    expect(await waits.decideDurably(id, 'call-1', { action: 'approve' }, effects)).toMatchObject({ outcome: 'decided', resumed: true });
    expect(await operations.complete(id, 'done')).toBe(true);
    const expected = [
      'created:running:1',
      'status:running:2',
      'message::2',
      'intervention::',
      'status:waiting:3',
      // One commit: the decision, its owed notification and "runnable again".
      'intervention:running:4',
      'owed:running:4',
      'status:running:4',
      'status:completed:',
    ];
    // In this process at once: published after each commit resolved.
    expect(brief(local.of(id))).toEqual(expected);
    if (remote) {
      await eventually(() => remote!.of(id).length >= expected.length, 'remote!.of(id).length >= expected.length', 5_000);
      expect(brief(remote.of(id))).toEqual(expected);
    }
  });

  it('DESIGN §4 events: a rolled-back transaction publishes nothing, here or elsewhere', async () => {
    const { id } = await newOperation();
    failpoint.afterStatement = (statement) => {
      if (updatesOperation(statement, id)) throw new Error('failpoint: after the operation update, before its commit');
    };
    await expect(commits.commit({ operationId: id, expectedVersion: 1, messages: [{ role: 'assistant', content: 'lost' }], patch: { stepIndex: 1 } })).rejects.toThrow('failpoint');
    failpoint.clear();
    // A failed compare-and-set (stale version) publishes nothing either.
    await expect(commits.commit({ operationId: id, expectedVersion: 7, patch: { stepIndex: 1 } })).rejects.toThrow();
    expect(await operations.complete(id, 'done')).toBe(true);
    expect(await operations.complete(id, 'done')).toBe(false);
    expect(brief(local.of(id))).toEqual(['created:running:1', 'status:completed:']);
    if (remote) {
      // NOTIFY is delivered in commit order: once the completion arrived, nothing before it is still on its way.
      await eventually(() => remote!.of(id).some((e) => e.status === 'completed'), 'remote!.of(id).some((e) => e.status === \'completed\')', 5_000);
      expect(brief(remote.of(id))).toEqual(['created:running:1', 'status:completed:']);
    }
  });

  it('DESIGN §4 events: of(id) delivers one operation\'s events and every resync', async () => {
    const first = await newOperation();
    const second = await newOperation();
    const seen: OperationEventSignal[] = [];
    const subscription = here.of(second.id).subscribe((signal) => seen.push(signal));
    try {
      await operations.complete(first.id, 'done');
      await operations.complete(second.id, 'done');
      expect(seen).toEqual([{ operationId: second.id, kind: 'status', status: 'completed' }]);
    } finally {
      subscription.unsubscribe();
    }
  });

  if (driver !== 'postgres') return;

  it('DESIGN §4 events: a second DataSource on the same PostgreSQL hears commits through NOTIFY, and neither hears its own twice', async () => {
    const { id } = await newOperation();
    // The other side commits too: its events come back here through NOTIFY, and there only once.
    const otherOperations = new OperationStore(otherHandle!);
    const { operation: theirs } = await otherOperations.create({ agentId: 'a', prompt: 'from the other side' });
    await operations.complete(id, 'done');
    await otherOperations.complete(theirs.id, 'done');
    await eventually(() => remote!.of(id).length >= 2 && local.of(theirs.id).length >= 2, 'remote!.of(id).length >= 2 && local.of(theirs.id).length >= 2', 5_000);
    // One more round trip, so a duplicate still on its way would have arrived.
    const { id: marker } = await newOperation();
    await eventually(() => remote!.of(marker).length >= 1 && local.of(marker).length >= 1, 'remote!.of(marker).length >= 1 && local.of(marker).length >= 1', 5_000);
    expect(brief(local.of(id))).toEqual(['created:running:1', 'status:completed:']);
    expect(brief(remote!.of(id))).toEqual(['created:running:1', 'status:completed:']);
    expect(brief(local.of(theirs.id))).toEqual(['created:running:1', 'status:completed:']);
    expect(brief(remote!.of(theirs.id))).toEqual(['created:running:1', 'status:completed:']);
  });

  it('DESIGN §4 events: a process following single operations only (a queue worker) hears theirs, and leaves the others\' payloads unparsed until something follows every event', async () => {
    const followed = await newOperation();
    const unfollowed = await newOperation();
    const worker = await new DataSource({ ...createDataSourceOptions(db.option), applicationName: `${applicationName}-worker` } as never).initialize();
    const events = eventsOn(new StoreDatabase(worker));
    const seen: OperationEventSignal[] = [];
    const subscription = events.of(followed.id).subscribe((signal) => seen.push(signal));
    // The other side follows nothing meanwhile either: no payload here is parsed but for the worker's operation.
    remote!.stop();
    const parse = jest.spyOn(JSON, 'parse');
    try {
      await eventually(() => seen.some((signal) => signal.kind === 'resync'), 'seen.some((signal) => signal.kind === \'resync\')', 10_000); // its LISTEN is in place
      await operations.complete(unfollowed.id, 'done');
      await operations.complete(followed.id, 'done');
      await eventually(() => seen.some((signal) => signal.kind === 'status'), 'seen.some((signal) => signal.kind === \'status\')', 5_000);
      expect(seen.filter((signal) => signal.kind !== 'resync')).toEqual([{ operationId: followed.id, kind: 'status', status: 'completed' }]);
      const parsedNaming = (id: string) => parse.mock.calls.filter(([text]) => typeof text === 'string' && text.startsWith('{"origin"') && text.includes(id)).length;
      expect(parsedNaming(followed.id)).toBeGreaterThan(0);
      expect(parsedNaming(unfollowed.id)).toBe(0);
      subscription.unsubscribe();
      // Once something follows every event, every payload is parsed and delivered again.
      const all = record(events);
      const later = await newOperation();
      await eventually(() => all.of(later.id).length >= 1, 'all.of(later.id).length >= 1', 5_000);
      expect(brief(all.of(later.id))).toEqual(['created:running:1']);
      all.stop();
    } finally {
      subscription.unsubscribe();
      parse.mockRestore();
      remote = record(there!);
      await events.close();
      await worker.destroy();
    }
  });

  it('DESIGN §4 events: a malformed NOTIFY payload is ignored and the listener goes on', async () => {
    const payloads = ['not json', '[]', '{"origin":1,"events":[]}', '{"origin":"x","events":[{"operationId":"y","kind":"nonsense"}]}', '{"origin":"x","events":[{"operationId":"y","kind":"status","status":"exploded"}]}'];
    for (const payload of payloads) await other!.query('SELECT pg_notify($1, $2)', [otherHandle!.eventsChannel, payload]);
    const { id } = await newOperation();
    await eventually(() => remote!.of(id).length >= 1, 'remote!.of(id).length >= 1', 5_000);
    expect(remote!.of('y')).toEqual([]);
  });

  it('DESIGN §4 events: an app on another schema of the same database hears none of these events, nor these of its', async () => {
    if (driver !== 'postgres') return expect(db.handle.eventsChannel).toBe('agent_hooks_events'); // SQLite: in-process only
    const schema = uniqueSchemaName();
    const foreignSource = await openAgentHooksDataSource(postgresDatabaseOption(schema));
    const foreignEvents = eventsOn(new StoreDatabase(foreignSource));
    const foreign = record(foreignEvents);
    try {
      expect(new StoreDatabase(foreignSource).eventsChannel).not.toBe(db.handle.eventsChannel);
      await eventually(() => foreign.resyncs() >= 1, 'foreign.resyncs() >= 1', 10_000); // listening
      const ours = await newOperation();
      // Committed through a handle of its own: the foreign listener does not skip it as its own.
      const theirs = (await new OperationStore(new StoreDatabase(foreignSource)).create({ agentId: 'a', prompt: 'elsewhere' })).operation;
      await eventually(() => foreign.of(theirs.id).length >= 1, 'foreign.of(theirs.id).length >= 1', 5_000);
      // Notifications reach each listener in commit order: had ours been on its channel, it would be here.
      expect(foreign.of(ours.id)).toEqual([]);
      const later = await newOperation();
      await eventually(() => remote!.of(later.id).length >= 1, 'remote!.of(later.id).length >= 1', 5_000);
      expect(remote!.of(theirs.id)).toEqual([]);
    } finally {
      foreign.stop();
      await foreignEvents.close();
      await foreignSource.destroy();
      await dropSchema(schema);
    }
  });

  it('DESIGN §4 events: after its connection drops, the listener reconnects, signals resync and hears commits again', async () => {
    const before = remote!.resyncs();
    const ended: { pid: number }[] = await db.dataSource.query(
      `SELECT pg_terminate_backend(pid) AS ended, pid FROM pg_stat_activity WHERE application_name = $1 AND query ILIKE 'LISTEN%'`,
      [applicationName],
    );
    expect(ended).toHaveLength(1); // one listening connection per DataSource
    await eventually(() => remote!.resyncs() > before, 'remote!.resyncs() > before', 10_000);
    const { id } = await newOperation();
    await eventually(() => remote!.of(id).length >= 1, 'remote!.of(id).length >= 1', 5_000);
    expect(brief(remote!.of(id))).toEqual(['created:running:1']);
  });

  it('G4: close() ends the listening connection and no reconnect follows', async () => {
    const listening = async () =>
      ((await db.dataSource.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND query ILIKE 'LISTEN%'`, [applicationName])) as { n: number }[])[0]!.n;
    expect(await listening()).toBe(1);
    await there!.close();
    await eventually(async () => (await listening()) === 0, '(await listening()) === 0', 5_000);
    const { id } = await newOperation();
    await eventually(() => local.of(id).length >= 1, 'local.of(id).length >= 1', 5_000);
    expect(remote!.of(id)).toEqual([]);
  });
});
