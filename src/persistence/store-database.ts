/**
 * How every store reaches the database: a `SqlSession` (`sql-session.ts`) for the hand-written statements,
 * and TypeORM's entity manager for the less frequent paths, both taking their turns through the session's
 * gate (on SQLite one connection serves every caller: a transaction begun while another is open would nest,
 * and one caller's rollback would undo another's work). Work passed in must use what it is given only,
 * never another store (re-entering the gate would wait for itself).
 *
 * It is also where committed changes become events (DESIGN §4): work publishes what it changed through the
 * `CommitEvents` it is given; the events reach `committed$` only once the work committed (never for a
 * rollback), and on PostgreSQL one `pg_notify` inside the same transaction carries them to the other
 * processes — delivered by PostgreSQL on commit, so a listener never sees an event for a rolled-back change.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Subject, type Observable } from 'rxjs';
import type { DataSource, EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import { EntityColumns } from './entity-columns.js';
import type { OperationEvent } from '../runtime/operation-events.port.js';
import { dialectOf, qualifiedTable, schemaOf, type SqlDialect } from './dialect.js';
import { openSqlSession } from './driver-sessions.js';
import { NO_SQL_SESSION_WRAPPER, type SqlExecutor, type SqlResult, type SqlSession, type SqlSessionWrapper } from './sql-session.js';
import { SqlParams } from './sql-session.js';

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
  /** The hand-written statements' way to the driver (wrapped in tests: `SQL_SESSION_WRAPPER`). */
  readonly session: SqlSession;
  /** Names this database handle in the events it notifies, so its own listener can skip them. */
  readonly origin = randomUUID();
  /** The NOTIFY channel of this schema's operation events (`eventsChannelOf`). */
  readonly eventsChannel: string;
  private readonly committed = new Subject<OperationEvent>();
  private readonly entityColumns = new Map<EntityTarget<ObjectLiteral>, EntityColumns<ObjectLiteral>>();

  constructor(
    readonly dataSource: DataSource,
    wrap: SqlSessionWrapper = NO_SQL_SESSION_WRAPPER,
  ) {
    this.dialect = dialectOf(dataSource);
    this.session = wrap(openSqlSession(dataSource));
    this.eventsChannel = eventsChannelOf(dataSource);
  }

  /** Events of every change committed through this handle, in commit order. */
  get committed$(): Observable<OperationEvent> {
    return this.committed.asObservable();
  }

  /** Runs `work` in one TypeORM transaction: everything it writes commits together or not at all. */
  async transaction<T>(work: (manager: EntityManager, events: CommitEvents) => Promise<T>): Promise<T> {
    const pending: OperationEvent[] = [];
    const events: CommitEvents = { publish: (event) => void pending.push(event) };
    const result = await this.session.exclusive(() =>
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
   * Runs `work` in one transaction of the session: its hand-written statements commit together or not at
   * all, with the `pg_notify` of what it published on PostgreSQL; the events reach `committed$` after the commit.
   */
  async sessionTransaction<T>(work: (tx: SqlExecutor, events: CommitEvents) => Promise<T>): Promise<T> {
    const pending: OperationEvent[] = [];
    const events: CommitEvents = { publish: (event) => void pending.push(event) };
    const result = await this.session.transaction(async (tx) => {
      const value = await work(tx, events);
      if (this.dialect === 'postgres') {
        for (let start = 0; start < pending.length; start += EVENTS_PER_NOTIFY) {
          await tx.query('SELECT pg_notify($1, $2)', [this.eventsChannel, this.notifyPayload(pending.slice(start, start + EVENTS_PER_NOTIFY))]);
        }
      }
      return value;
    });
    this.emit(pending);
    return result;
  }

  /**
   * Runs `work` outside a transaction: single statements (each atomic on its own) and reads. It publishes no
   * events: a change that others must hear of runs in `transaction`, so its NOTIFY commits with it.
   */
  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.session.exclusive(() => work(this.dataSource.manager));
  }

  /** One hand-written statement (`$n` placeholders) outside a transaction, and its rows. */
  query(sql: string, params: readonly unknown[]): Promise<SqlResult> {
    return this.session.query(sql, params);
  }

  /** Parameters for a statement built here: `$n` placeholders, casts where PostgreSQL needs one. */
  params(): SqlParams {
    return new SqlParams(this.dialect === 'postgres');
  }

  /**
   * The events of a change committed by the session (a step commit, an operation's creation or terminal
   * transition): published to `committed$` here, as `transaction` does after its commit. On PostgreSQL the
   * statement sent its own `pg_notify`.
   */
  committedAlone(events: readonly OperationEvent[]): void {
    this.emit(events);
  }

  /** The `pg_notify` payload of `events` (at most `EVENTS_PER_NOTIFY`) for a statement that notifies itself. */
  notifyPayload(events: readonly OperationEvent[]): string {
    const payload: NotifiedEvents = { origin: this.origin, events: [...events] };
    return JSON.stringify(payload);
  }

  /** `target`'s columns for hand-written SQL, built on first use (the metadata exists once the DataSource is initialized). */
  columns<T extends ObjectLiteral>(target: EntityTarget<T>): EntityColumns<T> {
    let columns = this.entityColumns.get(target);
    if (!columns) this.entityColumns.set(target, (columns = new EntityColumns(this.dataSource, target)));
    return columns as EntityColumns<T>;
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
}
