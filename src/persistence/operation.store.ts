/**
 * Operations: creation (with caller hooks and the prompt, atomically and idempotently), reads, and the
 * terminal transition. Step-by-step state changes go through `StepCommitStore`; leases through
 * `OperationLeaseStore`.
 */
import { randomUUID } from 'node:crypto';
import type { TerminalReason } from '../hooks/agent-events.js';
import { OperationCallerHookEntity } from './entities/operation-caller-hook.entity.js';
import { OperationEntity } from './entities/operation.entity.js';
import { toMessageRow } from './message-writer.js';
import { MessageEntity } from './entities/message.entity.js';
import { qualifiedTable } from './dialect.js';
import { EntityColumns } from './entity-columns.js';
import { completeStatement, createStatements, type LifecycleColumns, type LifecycleTables } from './operation-lifecycle.sql.js';
import type { OperationEvent } from '../runtime/operation-events.port.js';
import { toMessageRecord, toOperationRecord } from './record-mappers.js';
import type { MessageRecord, NewCallerHook, OperationRecord } from './records.js';
import { toStoredRunContext, type RunContextSource } from './run-context-snapshot.js';
import { isUniqueViolation } from './sql-errors.js';
import type { StoreDatabase } from './store-database.js';
import { nowIso, type StoreOptions } from './store-options.js';
import type { NewOperation, TerminalHold } from '../runtime/runtime-store.port.js';
import type { ClientToolDeclaration } from '../runtime/tools/client-tools.js';

/**
 * What `create` accepts: the runtime's `NewOperation`, looser where the store's other callers (`agentctl`,
 * tests) need it. The prompt is stored as the first message (role `user`); with `ownerId` a second create
 * with the same idempotency key returns the first operation (`created: false`).
 */
export type CreateOperationInput = Omit<NewOperation, 'id' | 'runContext' | 'callerHooks' | 'clientTools'> & {
  /** Generated (a UUID) when absent. */
  id?: string;
  /** Stored through the allow-list of `toStoredRunContext`: no token ever reaches the database. */
  runContext?: RunContextSource;
  /** Webhook caller hooks in registration order; their index is their `position`. */
  callerHooks?: readonly NewCallerHook[];
  /** The caller's declared client tools (already validated by the runtime). */
  clientTools?: readonly ClientToolDeclaration[];
};

export interface CreatedOperation {
  operation: OperationRecord;
  /** False when an operation with the same owner and idempotency key already existed. */
  created: boolean;
  /** The conversation as created (the prompt), when `created`. */
  messages?: MessageRecord[];
}

/** Who holds a just-completed operation while its terminal sequence runs, and for how long at most. */
export const TERMINAL_HOOKS_OWNER = 'terminal-sequence';
export const TERMINAL_HOOKS_LEASE_MS = 60_000;

export type { TerminalHold } from '../runtime/runtime-store.port.js';

/** Ids per `completedAmong` query. */
const COMPLETED_AMONG_CHUNK = 500;

export interface TerminalError {
  /** Absent when the reason says it all (a limit's JSON in `message` only: `max_steps`, `cost_limit`). */
  type?: string;
  /** Only for messages known to hold no user input (S3): the runtime records a reached limit's JSON here (run-limits.ts). */
  message?: string;
  /** A safe summary built from our own fields (DESIGN §7: model id, HTTP status, a variable's name). */
  summary?: string;
}

/** The completed operation as the terminal transition's statement returned it. */
export interface CompletedRow {
  operation: OperationRecord;
  /** Its message counter: the `seq` of its last message. */
  messageSeq: number;
}

export class OperationStore {
  private readonly db: StoreDatabase;
  private lifecycleTables: LifecycleTables | undefined;
  private lifecycleColumns: LifecycleColumns | undefined;
  private getSql: string | undefined;

  constructor(
    database: StoreDatabase,
    private readonly options: StoreOptions = {},
  ) {
    this.db = database;
  }

  /** The operation, its caller hooks and the user's prompt, in one transaction (status `running`, version 1). */
  async create(input: CreateOperationInput): Promise<CreatedOperation> {
    if (input.idempotencyKey !== undefined) {
      const existing = await this.findByIdempotencyKey(input.ownerId, input.idempotencyKey);
      if (existing) return { operation: existing, created: false };
    }
    try {
      const { operation, hooks, messages } = this.rows(input);
      const event: OperationEvent = { operationId: operation.id, kind: 'created', status: operation.status, version: operation.version };
      const notify = { channel: this.db.eventsChannel, payload: this.db.notifyPayload([event]) };
      await this.db.session.batch(createStatements(this.db.dialect, this.tables(), this.columns(), { operation, hooks, messages }, notify));
      // Out once committed; on PostgreSQL the statement notified the others.
      this.db.committedAlone([event]);
      return { operation: toOperationRecord(operation), created: true, messages: messages.map(toMessageRecord) };
    } catch (error) {
      // A concurrent create with the same key won the unique index: answer with its operation.
      if (input.idempotencyKey !== undefined && isUniqueViolation(error)) {
        const existing = await this.findByIdempotencyKey(input.ownerId, input.idempotencyKey);
        if (existing) return { operation: existing, created: false };
      }
      throw error;
    }
  }

  /** Plain SQL: read by every step's driver and by whoever waits for a result. */
  async get(operationId: string): Promise<OperationRecord | null> {
    const { operations } = this.columns();
    const sql = (this.getSql ??= `SELECT ${operations.names} FROM ${this.tables().operations} WHERE "id" = $1`);
    const [raw] = (await this.db.query(sql, [operationId])).records;
    return raw ? toOperationRecord(operations.hydrate(raw)) : null;
  }

  /** Which of `operationIds` are completed: one indexed read per chunk of ids (bound parameters stay well under SQLite's limit). */
  async completedAmong(operationIds: readonly string[]): Promise<string[]> {
    const completed: string[] = [];
    for (let start = 0; start < operationIds.length; start += COMPLETED_AMONG_CHUNK) {
      const ids = operationIds.slice(start, start + COMPLETED_AMONG_CHUNK);
      const params = this.db.params();
      const list = ids.map((id) => params.bind(id)).join(', ');
      const sql = `SELECT "id" FROM ${this.tables().operations} WHERE "id" IN (${list}) AND "status" = 'completed'`;
      for (const row of (await this.db.query(sql, params.values)).records) completed.push(row['id'] as string);
    }
    return completed;
  }

  /** Plain SQL: read by every create that carries an idempotency key (the unique index answers it). */
  async findByIdempotencyKey(ownerId: string | undefined, idempotencyKey: string): Promise<OperationRecord | null> {
    const { operations } = this.columns();
    const sql = `SELECT ${operations.names} FROM ${this.tables().operations} WHERE "idempotency_owner" = $1 AND "idempotency_key" = $2 LIMIT 1`;
    const [raw] = (await this.db.query(sql, [ownerId ?? '', idempotencyKey])).records;
    return raw ? toOperationRecord(operations.hydrate(raw)) : null;
  }

  /**
   * The terminal transition, exactly once whoever calls it (compare-and-set on `status <> 'completed'`):
   * true for the one caller that made it, false for every later one. Releases the lease and bumps the
   * version, so a step still running elsewhere cannot commit afterwards.
   */
  async complete(operationId: string, reason: TerminalReason, error?: TerminalError, hold?: TerminalHold): Promise<boolean> {
    return (await this.completeReturning(operationId, reason, error, hold)) !== null;
  }

  /**
   * `complete`, answering null when the operation was completed already; otherwise the completed row as
   * the transition's own statement returned it (with its message counter), nothing read back.
   */
  async completeReturning(operationId: string, reason: TerminalReason, error?: TerminalError, hold?: TerminalHold): Promise<{ row?: CompletedRow } | null> {
    const now = nowIso(this.options);
    const event: OperationEvent = { operationId, kind: 'status', status: 'completed' };
    const values = { operationId, reason, ...terminalValues(now, error, hold), now, ...(hold?.leaseOwner !== undefined ? { fencedBy: hold.leaseOwner } : {}) };
    const { sql, params } = completeStatement(this.db.dialect, this.tables().operations, values, { channel: this.db.eventsChannel, payload: this.db.notifyPayload([event]) });
    const [raw] = (await this.db.query(sql, params)).records;
    if (!raw) return null;
    // The new version is not read back here: subscribers that need it read the operation.
    this.db.committedAlone([event]);
    const entity = this.columns().operations.hydrate(raw);
    return { row: { operation: toOperationRecord(entity), messageSeq: Number(entity.messageSeq) } };
  }

  /** Extends `owner`'s hold on a completed operation's terminal sequence; false once it lapsed and was taken over. */
  async renewTerminalHold(operationId: string, owner: string, ms: number): Promise<boolean> {
    const until = new Date(Date.parse(nowIso(this.options)) + ms).toISOString();
    const sql = `UPDATE ${this.tables().operations} SET "lease_until" = $1 WHERE "id" = $2 AND "status" = 'completed' AND "terminal_hooks_at" IS NULL AND "lease_owner" = $3`;
    return (await this.db.query(sql, [until, operationId, owner])).affected === 1;
  }

  /** The terminal sequence of a completed operation finished: nothing is owed any more. */
  async markTerminalHooksDone(operationId: string): Promise<void> {
    const now = nowIso(this.options);
    // Plain SQL: once per operation on the path of every run; the version stays (a lease field, a time).
    const sql = `UPDATE ${this.tables().operations} SET "terminal_hooks_at" = $1, "lease_owner" = NULL, "lease_until" = NULL WHERE "id" = $2 AND "status" = 'completed'`;
    await this.db.query(sql, [now, operationId]);
  }

  /**
   * Completed operations whose terminal sequence is owed (its process died in between) and no longer held:
   * each one returned is claimed for `owner` (a compare-and-set on the lease), so two reconcilers never run
   * the same sequence at once.
   */
  async claimOwedTerminalHooks(owner: string, holdMs: number, limit = 50): Promise<OperationRecord[]> {
    const now = nowIso(this.options);
    const { operations } = this.columns();
    const table = this.tables().operations;
    const candidates = await this.db.query(
      `SELECT ${operations.names} FROM ${table} WHERE "status" = 'completed' AND "terminal_hooks_at" IS NULL AND ("lease_owner" IS NULL OR "lease_until" <= $1) ORDER BY "completed_at" ASC LIMIT $2`,
      [now, limit],
    );
    const until = new Date(Date.parse(now) + holdMs).toISOString();
    const claim = `UPDATE ${table} SET "lease_owner" = $1, "lease_until" = $2 WHERE "id" = $3 AND "terminal_hooks_at" IS NULL AND ("lease_owner" IS NULL OR "lease_until" <= $4)`;
    const claimed: OperationRecord[] = [];
    for (const raw of candidates.records) {
      const row = operations.hydrate(raw);
      if ((await this.db.query(claim, [owner, until, row.id, now])).affected === 1) claimed.push(toOperationRecord({ ...row, leaseOwner: owner, leaseUntil: until }));
    }
    return claimed;
  }

  private tables(): LifecycleTables {
    const source = this.db.dataSource;
    return (this.lifecycleTables ??= {
      operations: qualifiedTable(source, 'agent_hooks_operations'),
      callerHooks: qualifiedTable(source, 'agent_hooks_operation_hooks'),
      messages: qualifiedTable(source, 'agent_hooks_messages'),
    });
  }

  /** Built on first use: the DataSource's metadata exists once it is initialized. */
  private columns(): LifecycleColumns {
    const source = this.db.dataSource;
    return (this.lifecycleColumns ??= {
      operations: new EntityColumns(source, OperationEntity),
      callerHooks: new EntityColumns(source, OperationCallerHookEntity),
      messages: new EntityColumns(source, MessageEntity),
    });
  }

  /** The rows a new operation is: its own, its caller hooks in registration order, its prompt (message 1). */
  private rows(input: CreateOperationInput): { operation: OperationEntity; hooks: OperationCallerHookEntity[]; messages: MessageEntity[] } {
    const now = nowIso(this.options);
    const row: OperationEntity = {
      id: input.id ?? randomUUID(),
      parentOperationId: input.parentOperationId ?? null,
      threadId: input.threadId ?? null,
      parentToolCallId: input.parentToolCallId ?? null,
      compactionGroupId: null,
      compactionSummary: null,
      compactedThroughSeq: null,
      agentId: input.agentId,
      ownerId: input.ownerId ?? null,
      status: 'running',
      reason: null,
      stepIndex: 0,
      // The prompt is message 1.
      messageSeq: 1,
      runContext: toStoredRunContext(input.runContext),
      inputTokens: 0,
      outputTokens: 0,
      costUsd: 0,
      errorType: null,
      errorMessage: null,
      errorSummary: null,
      idempotencyOwner: input.idempotencyKey === undefined ? null : (input.ownerId ?? ''),
      idempotencyKey: input.idempotencyKey ?? null,
      idempotencyDigest: input.idempotencyKey !== undefined ? (input.idempotencyDigest ?? null) : null,
      version: 1,
      leaseOwner: input.lease?.owner ?? null,
      leaseUntil: input.lease ? new Date(Date.parse(now) + input.lease.ttlMs).toISOString() : null,
      createdAt: now,
      updatedAt: now,
      completedAt: null,
      terminalHooksAt: null,
      clientTools: input.clientTools && input.clientTools.length > 0 ? [...input.clientTools] : null,
      traceContext: input.traceContext ?? null,
    };
    const hooks = (input.callerHooks ?? []).map((hook, position): OperationCallerHookEntity => ({
      operationId: row.id,
      position,
      hookId: hook.hookId,
      type: hook.type,
      matcher: hook.matcher ?? null,
      webhook: hook.webhook,
    }));
    return { operation: row, hooks, messages: [toMessageRow(row.id, 1, { role: 'user', content: input.prompt }, now)] };
  }
}

/** The error and the terminal-sequence hold a completion writes, the same on both paths. */
function terminalValues(now: string, error: TerminalError | undefined, hold: TerminalHold | undefined) {
  return {
    errorType: error?.type ?? null,
    errorMessage: error?.message ?? null,
    errorSummary: error?.summary ?? null,
    // The completing process holds the terminal sequence for a while; after that, a reconciler may run it.
    leaseOwner: hold?.owner ?? TERMINAL_HOOKS_OWNER,
    leaseUntil: new Date(Date.parse(now) + (hold?.ms ?? TERMINAL_HOOKS_LEASE_MS)).toISOString(),
    ...(hold?.nothingOwed ? { nothingOwed: true } : {}),
  };
}
