/**
 * How every store reaches the database. On PostgreSQL each transaction gets its own pooled connection, so
 * this only forwards. SQLite (better-sqlite3) is one synchronous connection that TypeORM shares between
 * all callers: a second `transaction()` started while one is open becomes a SAVEPOINT inside it, and a
 * plain statement issued meanwhile joins it — one caller's rollback would undo another's committed work.
 * So on SQLite every store call takes its turn through one FIFO gate per handle, shared by all the stores
 * built on it: `RuntimeDatabase` creates one handle when it opens the DataSource and builds every store on
 * it (`createRuntimeStores`). better-sqlite3 runs statements synchronously anyway, so the gate costs no
 * parallelism. Work passed in must use the given `EntityManager` only, never another store (re-entering
 * the gate would wait for itself).
 *
 * It is also where committed changes become events (DESIGN §4): work publishes what it changed through the
 * `CommitEvents` it is given; the events reach `committed$` only once the work committed (never for a
 * rollback), and on PostgreSQL one `pg_notify` inside the same transaction carries them to the other
 * processes — delivered by PostgreSQL on commit, so a listener never sees an event for a rolled-back change.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Subject, type Observable } from 'rxjs';
import type { DataSource, EntityManager } from 'typeorm';
import type { OperationEvent } from '../runtime/operation-events.port.js';
import { asQueryFailed } from './sql-errors.js';
import { dialectOf, qualifiedTable, schemaOf, type SqlDialect } from './dialect.js';
import { NativeSqliteStatements, runStatement } from './native-sqlite.js';
import { plainQuery, type PlainResult } from './plain-query.js';

/** The PostgreSQL channel of operation events in the default schema (`LISTEN agent_hooks_events`). */
export const OPERATION_EVENTS_CHANNEL = 'agent_hooks_events';

/**
 * The channel of the operation events of the tables in `dataSource`'s schema. NOTIFY channels are per
 * database, not per schema: two apps with their own schemas in one database must not wake each other's
 * listeners (their operation ids mean nothing there). Another schema's channel carries a digest of its
 * name (a channel is an identifier of at most 63 bytes; a schema name may not fit or be an identifier).
 */
export function eventsChannelOf(dataSource: Pick<DataSource, 'options'>): string {
  const schema = schemaOf(dataSource);
  if (schema === undefined || schema === 'public') return OPERATION_EVENTS_CHANNEL;
  return `${OPERATION_EVENTS_CHANNEL}_${createHash('sha256').update(schema).digest('hex').slice(0, 16)}`;
}

/** A `pg_notify` payload: the events of one commit and who committed them. */
export interface NotifiedEvents {
  /** The committing `StoreDatabase` (its own listener skips them: they were published locally already). */
  origin: string;
  events: OperationEvent[];
}

/** What a unit of work publishes; the events go out after it committed. */
export interface CommitEvents {
  publish(event: OperationEvent): void;
}

/** NOTIFY payloads are limited to 8,000 bytes: a commit with more events is sent in several. */
export const EVENTS_PER_NOTIFY = 40;

export class StoreDatabase {
  readonly dialect: SqlDialect;
  /** SQLite through better-sqlite3, whose own handle `runNative` uses (a host's other SQLite drivers go through TypeORM). */
  readonly nativeSqlite: boolean;
  /** Names this database handle in the events it notifies, so its own listener can skip them. */
  readonly origin = randomUUID();
  /** The NOTIFY channel of this schema's operation events (`eventsChannelOf`). */
  readonly eventsChannel: string;
  private readonly committed = new Subject<OperationEvent>();
  /** The end of the SQLite queue; each call chains onto it. */
  private tail: Promise<unknown> = Promise.resolve();
  /** Calls in the SQLite queue, running or waiting: none means a synchronous call may run at once. */
  private queued = 0;
  private nativeStatements: NativeSqliteStatements | undefined;

  constructor(readonly dataSource: DataSource) {
    this.dialect = dialectOf(dataSource);
    this.nativeSqlite = dataSource.options.type === 'better-sqlite3';
    this.eventsChannel = eventsChannelOf(dataSource);
  }

  /** Events of every change committed through this handle, in commit order. */
  get committed$(): Observable<OperationEvent> {
    return this.committed.asObservable();
  }

  /** Runs `work` in one transaction: everything it writes commits together or not at all. */
  async transaction<T>(work: (manager: EntityManager, events: CommitEvents) => Promise<T>): Promise<T> {
    const pending: OperationEvent[] = [];
    const events: CommitEvents = { publish: (event) => void pending.push(event) };
    const result = await this.exclusive(() =>
      this.dataSource.transaction(async (manager) => {
        const value = await work(manager, events);
        await this.notify(manager, pending);
        return value;
      }),
    );
    this.emit(pending);
    return result;
  }

  /**
   * Runs `work` outside a transaction: single statements (each atomic on its own) and reads. It publishes no
   * events: a change that others must hear of runs in `transaction`, so its NOTIFY commits with it.
   */
  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.exclusive(() => work(this.dataSource.manager));
  }

  /**
   * SQLite only: `work` on better-sqlite3's own handle and prepared statements (`native-sqlite.ts`), in the
   * gate's order. It is synchronous, so nothing can interleave with it: when nothing is queued it runs at
   * once, without waiting for a turn.
   */
  runNative<T>(work: (native: NativeSqliteStatements) => T): Promise<T> {
    if (!this.nativeSqlite) throw new TypeError('runNative is for better-sqlite3');
    const native = (this.nativeStatements ??= new NativeSqliteStatements(this.dataSource));
    if (this.queued === 0) {
      try {
        return Promise.resolve(work(native));
      } catch (error) {
        return Promise.reject(error as Error);
      }
    }
    return this.exclusive(async () => work(native));
  }

  /**
   * One hand-written statement outside a transaction and its rows (`RETURNING` rows included): on SQLite a
   * prepared statement of the native handle (TypeORM's query runner costs more than the statement),
   * on PostgreSQL `plainQuery` on the pool.
   */
  query(sql: string, params: readonly unknown[]): Promise<PlainResult> {
    if (this.dialect === 'postgres') return plainQuery(this.dataSource.manager, sql, params);
    if (!this.nativeSqlite) return this.run((manager) => plainQuery(manager, sql, params));
    return this.runNative((native) => {
      try {
        return runStatement(native, sql, params);
      } catch (error) {
        throw asQueryFailed(sql, error);
      }
    });
  }

  /**
   * The events of a change committed by one statement that sent its own `pg_notify` (a step commit on
   * PostgreSQL, step-commit.sql.ts): published to `committed$` here, as `transaction` does after its commit.
   */
  committedAlone(events: readonly OperationEvent[]): void {
    this.emit(events);
  }

  /** The `pg_notify` payload of `events` (at most `EVENTS_PER_NOTIFY`) for a statement that notifies itself. */
  notifyPayload(events: readonly OperationEvent[]): string {
    const payload: NotifiedEvents = { origin: this.origin, events: [...events] };
    return JSON.stringify(payload);
  }

  /** `"schema"."table"` for hand-written SQL. */
  table(name: string): string {
    return qualifiedTable(this.dataSource, name);
  }

  private async notify(manager: EntityManager, events: readonly OperationEvent[]): Promise<void> {
    if (this.dialect !== 'postgres' || events.length === 0) return;
    for (let start = 0; start < events.length; start += EVENTS_PER_NOTIFY) {
      const payload: NotifiedEvents = { origin: this.origin, events: events.slice(start, start + EVENTS_PER_NOTIFY) };
      await manager.query('SELECT pg_notify($1, $2)', [this.eventsChannel, JSON.stringify(payload)]);
    }
  }

  private emit(events: readonly OperationEvent[]): void {
    for (const event of events) this.committed.next(event);
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    if (this.dialect === 'postgres') return work();
    this.queued++;
    const turn = this.tail.then(work);
    // The queue goes on whether this call succeeds or fails; its caller sees its own result.
    this.tail = turn.then(
      () => void this.queued--,
      () => void this.queued--,
    );
    return turn;
  }
}
