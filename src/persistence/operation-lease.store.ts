/**
 * Leases: one worker at a time runs an operation's step (DESIGN §4). Each call is one conditional UPDATE,
 * so two workers racing for a lease cannot both win. A lease expires on its own (`leaseUntil`), so a
 * killed worker's operation is picked up again; a holder renews while it works and passes its owner id to
 * `StepCommitStore.commit({ leaseOwner })`, which refuses a commit once the lease has moved on.
 * Leases never bump the operation's version: they say who may work, not what the state is.
 *
 * The statements of every queued step (acquire, renew, release, hand back) are plain parameterized SQL
 * (they are on every queued step's path, and TypeORM's update builder does more work than the statement),
 * and each returns what it found:
 * `acquire` the whole operation row as it took the lease, `letGo` its version and status as it let go — so
 * the holder reads neither again. Given the state the caller already has (`KnownState`), `acquire` on
 * PostgreSQL returns the row only when the operation is no longer in that state, and then as one JSON
 * column (`row_to_json`) rather than one column each: a worker takes a lease per step, and the driver's
 * cost grows with the columns a result has. With the row come what the step under the lease begins with
 * besides — the conversation (`json_agg`) and whether the operation has caller hooks — read by the same
 * statement, so a worker taking an operation it has not seen reads nothing else to begin its step. Of the
 * conversation only what follows the caller's known counter: messages are append-only with contiguous
 * seqs, so a worker whose cached state is stale (a step of the operation ran on another worker since) gets
 * the tail and appends it, instead of the whole conversation parsed again every time a step moves.
 *
 * Owner ids must be unique per holder (e.g. `${workerId}:${randomUUID()}` per step attempt): acquiring a
 * lease one already holds succeeds (it renews), so two holders sharing an id would both "hold" it.
 */
import { qualifiedTable } from './dialect.js';
import { EntityColumns } from './entity-columns.js';
import { MessageEntity } from './entities/message.entity.js';
import { OperationEntity } from './entities/operation.entity.js';
import { toMessageRecord, toOperationRecord } from './record-mappers.js';
import type { MessageRecord, OperationRecord } from './records.js';
import type { SqlParams } from './sql-session.js';
import type { StoreDatabase } from './store-database.js';
import type { StoreOptions } from './store-options.js';

export interface Lease {
  operationId: string;
  owner: string;
  /** ISO-8601 expiry. */
  until: string;
}

/** A lease just taken, and the operation's state as its UPDATE left it. */
export interface AcquiredLease extends Lease {
  /** The whole row (the lease fields included); absent when the operation is still in the `known` state. */
  operation?: OperationRecord;
  version: number;
  status: OperationRecord['status'];
  /** The operation's message counter: the `seq` of its last message. */
  messageSeq: number;
  /**
   * PostgreSQL, with `operation`: its messages after `messagesAfter` in `seq` order, read by the same
   * statement (its snapshot: compare the last `seq` with `messageSeq` before trusting it), and whether it
   * has caller hooks.
   */
  messages?: MessageRecord[];
  /** The `seq` `messages` follow: the `known` counter, or 0 (the whole conversation) without one. */
  messagesAfter?: number;
  hasCallerHooks?: boolean;
}

/**
 * The operation's state as the caller has it: `acquire` returns the row only when it is no longer that,
 * and of the conversation only the messages after `messageSeq` (the caller has those up to it).
 */
export interface KnownState {
  version: number;
  status: OperationRecord['status'];
  messageSeq: number;
}

/** What a released lease's UPDATE found: the operation's state as the holder let go. */
export interface ReleasedLease {
  version: number;
  status: OperationRecord['status'];
}

export class OperationLeaseStore {
  private readonly db: StoreDatabase;
  private tableNames: { operations: string; messages: string; callerHooks: string } | undefined;
  private operationColumns: EntityColumns<OperationEntity> | undefined;
  private messageEntityColumns: EntityColumns<MessageEntity> | undefined;

  constructor(
    database: StoreDatabase,
    private readonly options: StoreOptions = {},
  ) {
    this.db = database;
  }

  /**
   * Takes the lease if it is free, expired or already `owner`'s; null if another holder has it or the
   * operation is completed. The row comes with it unless the operation is still in the `known` state.
   */
  async acquire(operationId: string, owner: string, ttlMs: number, known?: KnownState): Promise<AcquiredLease | null> {
    const now = this.now();
    const until = new Date(now.getTime() + ttlMs).toISOString();
    const postgres = this.db.dialect === 'postgres';
    const params = this.params();
    let sql =
      `UPDATE ${this.operations()}${postgres ? ' AS "op"' : ''} SET "lease_owner" = ${params.bind(owner)}, "lease_until" = ${params.bind(until)} ` +
      `WHERE "id" = ${params.bind(operationId)} AND "status" <> 'completed' ` +
      `AND ("lease_owner" IS NULL OR "lease_until" <= ${params.bind(now.toISOString())} OR "lease_owner" = ${params.bind(owner)}) `;
    if (postgres) {
      const unchanged = known
        ? `"version" = ${params.bind(known.version)} AND "message_seq" = ${params.bind(known.messageSeq)} AND "status" = ${params.bind(known.status)}`
        : 'FALSE';
      const tables = this.tables();
      const after = known ? ` AND "m"."seq" > ${params.bind(known.messageSeq)}` : '';
      const messages = `SELECT json_agg("m" ORDER BY "m"."seq")::text FROM ${tables.messages} AS "m" WHERE "m"."operation_id" = "op"."id"${after}`;
      const hooks = `EXISTS (SELECT 1 FROM ${tables.callerHooks} AS "h" WHERE "h"."operation_id" = "op"."id")`;
      sql +=
        `RETURNING "version", "message_seq", "status", CASE WHEN ${unchanged} THEN NULL ELSE row_to_json("op")::text END AS "row", ` +
        `CASE WHEN ${unchanged} THEN NULL ELSE (${messages}) END AS "messages", CASE WHEN ${unchanged} THEN NULL ELSE ${hooks} END AS "has_caller_hooks"`;
    } else {
      sql += `RETURNING ${this.columns().names}`;
    }
    const [raw] = await this.rows(sql, params);
    if (!raw) return null;
    // PostgreSQL's JSON carries each column as the driver would parse it (text, integer, double precision).
    const row = postgres ? (typeof raw['row'] === 'string' ? (JSON.parse(raw['row']) as Record<string, unknown>) : undefined) : raw;
    const state = { version: Number(raw['version']), messageSeq: Number(raw['message_seq']), status: raw['status'] as AcquiredLease['status'] };
    if (!row) return { operationId, owner, until, ...state };
    const operation = toOperationRecord(this.columns().hydrate(row));
    if (!postgres) return { operationId, owner, until, ...state, operation };
    const messageRows = typeof raw['messages'] === 'string' ? (JSON.parse(raw['messages']) as Record<string, unknown>[]) : [];
    const messages = messageRows.map((message) => toMessageRecord(this.messageColumns().hydrate(message)));
    return { operationId, owner, until, ...state, operation, messages, messagesAfter: known?.messageSeq ?? 0, hasCallerHooks: raw['has_caller_hooks'] === true };
  }

  /** Extends `owner`'s lease; null if it has moved on (stop working: another worker may run the step). */
  async renew(operationId: string, owner: string, ttlMs: number): Promise<Lease | null> {
    const until = new Date(this.now().getTime() + ttlMs).toISOString();
    const params = this.params();
    const sql =
      `UPDATE ${this.operations()} SET "lease_until" = ${params.bind(until)} ` +
      `WHERE "id" = ${params.bind(operationId)} AND "lease_owner" = ${params.bind(owner)} AND "status" <> 'completed' RETURNING "id"`;
    return (await this.rows(sql, params)).length === 1 ? { operationId, owner, until } : null;
  }

  /** Gives the lease up; false if `owner` no longer held it. */
  async release(operationId: string, owner: string): Promise<boolean> {
    return (await this.letGo(operationId, owner)) !== null;
  }

  /**
   * Gives the lease up and says what the operation's state was as it did (its version and status, in the
   * same statement): what the holder schedules next without reading the operation again. Null if `owner`
   * no longer held it.
   */
  async letGo(operationId: string, owner: string): Promise<ReleasedLease | null> {
    const params = this.params();
    const sql =
      `UPDATE ${this.operations()} SET "lease_owner" = NULL, "lease_until" = NULL ` +
      `WHERE "id" = ${params.bind(operationId)} AND "lease_owner" = ${params.bind(owner)} RETURNING "version", "status"`;
    const [raw] = await this.rows(sql, params);
    return raw ? { version: Number(raw['version']), status: raw['status'] as ReleasedLease['status'] } : null;
  }

  /**
   * Gives the lease up so that a reconciler takes the operation over at its next pass: the lease is made
   * expired rather than cleared, since an unleased running operation is left alone until it has been quiet
   * for a while (it may be between two steps). False if `owner` no longer held it.
   */
  async handBack(operationId: string, owner: string): Promise<boolean> {
    const params = this.params();
    const sql = `UPDATE ${this.operations()} SET "lease_until" = ${params.bind(this.now().toISOString())} WHERE "id" = ${params.bind(operationId)} AND "lease_owner" = ${params.bind(owner)} RETURNING "id"`;
    return (await this.rows(sql, params)).length === 1;
  }

  /**
   * Running operations a reconciler takes over: those whose lease expired (their holder died or handed them
   * back), and those nobody ever held that have not changed since `quietSince` (a process died between
   * committing and driving, or between a queue step's commit and its successor's enqueue), oldest first.
   */
  async listRecoverable(quietSince: string, limit = 100): Promise<OperationRecord[]> {
    const now = this.now().toISOString();
    const rows = await this.db.run((manager) =>
      manager
        .createQueryBuilder(OperationEntity, 'operation')
        .where('operation.status = :running', { running: 'running' })
        .andWhere('((operation.leaseOwner IS NULL AND operation.updatedAt <= :quietSince) OR (operation.leaseOwner IS NOT NULL AND operation.leaseUntil <= :now))', { now, quietSince })
        .orderBy('operation.updatedAt', 'ASC')
        .addOrderBy('operation.id', 'ASC')
        .limit(limit)
        .getMany(),
    );
    return rows.map(toOperationRecord);
  }

  private now(): Date {
    return this.options.clock?.() ?? new Date();
  }

  private params(): SqlParams {
    return this.db.params();
  }

  private async rows(sql: string, params: SqlParams): Promise<Record<string, unknown>[]> {
    return (await this.db.query(sql, params.values)).records;
  }

  private operations(): string {
    return this.tables().operations;
  }

  private tables(): { operations: string; messages: string; callerHooks: string } {
    const source = this.db.dataSource;
    return (this.tableNames ??= {
      operations: qualifiedTable(source, 'agent_hooks_operations'),
      messages: qualifiedTable(source, 'agent_hooks_messages'),
      callerHooks: qualifiedTable(source, 'agent_hooks_operation_hooks'),
    });
  }

  private messageColumns(): EntityColumns<MessageEntity> {
    return (this.messageEntityColumns ??= new EntityColumns(this.db.dataSource, MessageEntity));
  }

  /** Built on first use: the DataSource's metadata exists once it is initialized. */
  private columns(): EntityColumns<OperationEntity> {
    return (this.operationColumns ??= new EntityColumns(this.db.dataSource, OperationEntity));
  }
}
