/**
 * A step's effects, committed as one: messages (the assistant's answer, a published tool result) and the
 * operation's new state (step index, usage totals, status, run context), in one transaction guarded by
 * the optimistic version — and, for a worker holding a lease, by the lease owner (a fencing check: a
 * worker whose lease was taken over cannot commit). If any write fails, nothing is written (P1: a result
 * is published with its state change or not at all).
 *
 * Order: the conditional UPDATE of the operation first — on PostgreSQL it holds the row, so a concurrent
 * commit of the same operation waits, then finds the version moved and fails — returning the row after
 * it (nothing is read back), then the messages, whose seqs the UPDATE reserved on the row's counter. On
 * PostgreSQL the whole commit, NOTIFY included, is one statement (step-commit.sql.ts); on SQLite the same
 * statements in better-sqlite3's own transaction; with a failpoint set (tests) they run in a TypeORM
 * transaction, so the failpoint sits between the UPDATE and the messages.
 */
import type { EntityManager } from 'typeorm';
import type { OperationEvent } from '../runtime/operation-events.port.js';
import type { StepPatch } from '../runtime/runtime-store.port.js';
import { qualifiedTable } from './dialect.js';
import { EntityColumns } from './entity-columns.js';
import { MessageEntity } from './entities/message.entity.js';
import { OperationEntity } from './entities/operation.entity.js';
import { toMessageRow } from './message-writer.js';
import { asQueryFailed } from './sql-errors.js';
import { OperationNotFoundError, StaleOperationError } from './persistence-errors.js';
import { plainQuery } from './plain-query.js';
import { toMessageRecord, toOperationRecord } from './record-mappers.js';
import type { HookOutcomeStore } from './hook-outcome.store.js';
import type { MessageRecord, NewHookOutcome, NewMessage, NewToolMessage, OperationRecord } from './records.js';
import { toStoredRunContext, type RunContextSource } from './run-context-snapshot.js';
import { insertRowsSql, oneStatementCommitSql, SqlParams, updateOperationSql, type CommitTables } from './step-commit.sql.js';
import { EVENTS_PER_NOTIFY, type StoreDatabase } from './store-database.js';
import { nowIso, type StoreOptions } from './store-options.js';

/** The runtime's `StepPatch`; the run context may come unfiltered (stored through `toStoredRunContext`). */
export interface OperationPatch extends Omit<StepPatch, 'runContext'> {
  runContext?: RunContextSource;
}

export interface StepCommit {
  operationId: string;
  /** The version the step read; the commit fails with `StaleOperationError` if it moved. */
  expectedVersion: number;
  messages?: readonly NewMessage[];
  patch?: OperationPatch;
  /** When set, the commit also requires this worker to still hold the operation's lease. */
  leaseOwner?: string;
  /**
   * The operation as the caller knows it at `expectedVersion` (what its last commit returned): the UPDATE
   * then returns only the few columns that can differ, and the result is `base` with the patch applied.
   */
  base?: OperationRecord;
  /**
   * Hook timeline rows written in the same transaction (only where `writesTimeline`: SQLite): one
   * transaction for a step and the timeline of the hooks that decided it. Not written if the commit is refused.
   */
  timeline?: readonly NewHookOutcome[];
}

export interface StepCommitResult {
  /** The operation after the commit (version + 1). */
  operation: OperationRecord;
  messages: MessageRecord[];
  /** The operation's message counter after the commit: the `seq` of its last message. */
  messageSeq: number;
}

export type ToolResultPublish = Omit<StepCommit, 'messages'> & { message: NewToolMessage };

/** Test and chaos seams: called between the writes of a commit; a throw must roll the commit back. */
export interface StepCommitFailpoints {
  /** After the operation's UPDATE, before the messages are written; `commit` says what is being committed. */
  afterOperationUpdate?(operationId: string, commit: StepCommit): void | Promise<void>;
}

/**
 * The failpoints `RuntimeDatabase` gives its commit store: none in the module; a test replaces them with
 * `overrideProvider(STEP_COMMIT_FAILPOINTS)` to fail a real run between two writes of one commit.
 */
export const STEP_COMMIT_FAILPOINTS = Symbol('nest-agent-hooks:StepCommitFailpoints');
export const NO_STEP_COMMIT_FAILPOINTS: StepCommitFailpoints = Object.freeze({});

export interface StepCommitOptions extends StoreOptions {
  failpoints?: StepCommitFailpoints;
  /** Writes a commit's `timeline` rows inside its transaction (SQLite). */
  timeline?: HookOutcomeStore;
}

export class StepCommitStore {
  private readonly db: StoreDatabase;
  private commitTables: CommitTables | undefined;
  private entityColumns: { operations: EntityColumns<OperationEntity>; messages: EntityColumns<MessageEntity> } | undefined;

  constructor(
    database: StoreDatabase,
    private readonly options: StepCommitOptions = {},
  ) {
    this.db = database;
  }

  /** Whether a commit's `timeline` rows are written in its transaction (SQLite, no failpoint set). */
  get writesTimeline(): boolean {
    return this.db.nativeSqlite && this.options.failpoints?.afterOperationUpdate === undefined && this.options.timeline !== undefined;
  }

  /**
   * Applies `patch`, appends `messages` and bumps the version, all or nothing. Throws `StaleOperationError`
   * when the version moved, the operation is completed or the lease moved on; `OperationNotFoundError`
   * when there is no such operation.
   */
  commit(input: StepCommit): Promise<StepCommitResult> {
    if ((input.patch?.status as string | undefined) === 'completed') {
      throw new TypeError("a step commit cannot complete an operation: use OperationStore.complete (exactly once)");
    }
    if (input.patch?.releaseLease === true && input.leaseOwner === undefined) throw new TypeError('a step commit releases only the lease it is fenced by: give its leaseOwner');
    // A failpoint needs a point between two writes; a commit with more events than one NOTIFY carries is split.
    const oneStatement =
      this.db.dialect === 'postgres' && this.options.failpoints?.afterOperationUpdate === undefined && (input.messages?.length ?? 0) < EVENTS_PER_NOTIFY;
    if (input.timeline !== undefined && input.timeline.length > 0 && !this.writesTimeline) throw new TypeError('this commit store writes no timeline rows: see writesTimeline');
    if (oneStatement) return this.commitInOneStatement(input);
    if (this.db.nativeSqlite && this.options.failpoints?.afterOperationUpdate === undefined) return this.commitOnSqlite(input);
    return this.commitInTransaction(input);
  }

  /**
   * SQLite: the same statements in better-sqlite3's own synchronous transaction, prepared once, inside
   * the store gate (no other store statement can interleave; nothing is awaited between BEGIN and COMMIT).
   */
  private async commitOnSqlite(input: StepCommit): Promise<StepCommitResult> {
    const committed = await this.db.runNative((native) => {
      const now = nowIso(this.options);
      const { operationId } = input;
      const tables = this.tables();
      const update = new SqlParams(false);
      const updateSql = updateOperationSql(update, tables.operations, input, now);
      const rows = (input.messages ?? []).map((message) => toMessageRow(operationId, 0, message, now));
      let sql = updateSql;
      try {
        return native.inTransaction(() => {
          const raw = native.prepared(updateSql).get(update.values);
          if (!raw) return undefined;
          const done = this.committed(input, now, raw, rows);
          if (rows.length > 0) {
            const insert = new SqlParams(false);
            sql = insertRowsSql(insert, tables.messages, this.columns().messages, rows);
            native.prepared(sql).run(insert.values);
          }
          if (input.timeline !== undefined) this.options.timeline?.writeOnSqlite(native, input.timeline);
          return done;
        });
      } catch (error) {
        throw asQueryFailed(sql, error);
      }
    });
    // Refused: why, in a turn of its own (as on PostgreSQL).
    if (!committed) throw await this.db.run((manager) => this.refusal(manager, input));
    // Out after the commit (and after the gate's turn), as `transaction` does.
    this.db.committedAlone(commitEvents(committed));
    return committed;
  }

  /** PostgreSQL: UPDATE, INSERT and NOTIFY as one statement (its own transaction; step-commit.sql.ts). */
  private async commitInOneStatement(input: StepCommit): Promise<StepCommitResult> {
    const now = nowIso(this.options);
    const { operationId } = input;
    const messages = input.messages ?? [];
    const rows = messages.map((message) => toMessageRow(operationId, 0, message, now));
    const params = new SqlParams(true);
    const sql = oneStatementCommitSql(params, input, now, {
      tables: this.tables(),
      messageColumns: this.columns().messages,
      rows,
      channel: this.db.eventsChannel,
      origin: this.db.origin,
    });
    const result = await this.db.run((manager) => plainQuery(manager, sql, params.values));
    const raw = result.records[0] as Record<string, unknown> | undefined;
    if (!raw) throw await this.db.run((manager) => this.refusal(manager, input));
    const committed = this.committed(input, now, raw, rows);
    this.db.committedAlone(commitEvents(committed));
    return committed;
  }

  /** One transaction: the UPDATE, the failpoint, the INSERT; events (and on PostgreSQL the NOTIFY) with the commit. */
  private commitInTransaction(input: StepCommit): Promise<StepCommitResult> {
    const postgres = this.db.dialect === 'postgres';
    return this.db.transaction(async (manager, events) => {
      const now = nowIso(this.options);
      const { operationId } = input;
      const tables = this.tables();
      const update = new SqlParams(postgres);
      const result = await plainQuery(manager, updateOperationSql(update, tables.operations, input, now), update.values);
      const raw = result.records[0] as Record<string, unknown> | undefined;
      if (!raw) throw await this.refusal(manager, input);
      await this.options.failpoints?.afterOperationUpdate?.(operationId, input);
      const rows = (input.messages ?? []).map((message) => toMessageRow(operationId, 0, message, now));
      const committed = this.committed(input, now, raw, rows);
      if (rows.length > 0) {
        const insert = new SqlParams(postgres);
        await plainQuery(manager, insertRowsSql(insert, tables.messages, this.columns().messages, rows), insert.values);
      }
      // Out after the commit, never for a rollback (DESIGN §4).
      for (const event of commitEvents(committed)) events.publish(event);
      return committed;
    });
  }

  /** The committed operation from its returned row (and `base`); `rows` get their seqs (the counter's last ones). */
  private committed(input: StepCommit, now: string, raw: Record<string, unknown>, rows: MessageEntity[]): StepCommitResult {
    const operations = this.columns().operations;
    const { base } = input;
    const known = base !== undefined && base.version === input.expectedVersion;
    const messageSeq = Number(raw['message_seq']);
    const operation = known ? patched(base, input.patch ?? {}, raw, now) : toOperationRecord(operations.hydrate(raw));
    const first = messageSeq - rows.length + 1;
    rows.forEach((row, index) => (row.seq = first + index));
    return { operation, messages: rows.map(toMessageRecord), messageSeq };
  }

  /** Why the guarded UPDATE matched no row: the operation moved on, or there is none. */
  private async refusal(manager: EntityManager, input: StepCommit): Promise<Error> {
    const exists = await manager.existsBy(OperationEntity, { id: input.operationId });
    return exists ? new StaleOperationError(input.operationId, input.expectedVersion) : new OperationNotFoundError(input.operationId);
  }

  private tables(): CommitTables {
    const source = this.db.dataSource;
    return (this.commitTables ??= { operations: qualifiedTable(source, 'agent_hooks_operations'), messages: qualifiedTable(source, 'agent_hooks_messages') });
  }

  /** Built on first use: the DataSource's metadata exists once it is initialized. */
  private columns(): { operations: EntityColumns<OperationEntity>; messages: EntityColumns<MessageEntity> } {
    const source = this.db.dataSource;
    return (this.entityColumns ??= { operations: new EntityColumns(source, OperationEntity), messages: new EntityColumns(source, MessageEntity) });
  }

  /** Publishes one tool result (P1) with its state change: `commit` with exactly that message. */
  async publishToolResult(input: ToolResultPublish): Promise<StepCommitResult & { message: MessageRecord }> {
    const { message, ...rest } = input;
    const result = await this.commit({ ...rest, messages: [message] });
    return { ...result, message: result.messages[0]! };
  }
}

/** What a commit tells subscribers: the operation's status and version after it, one `message` event per message. */
function commitEvents({ operation, messages }: StepCommitResult): OperationEvent[] {
  const events: OperationEvent[] = [{ operationId: operation.id, kind: 'status', status: operation.status, version: operation.version }];
  for (let index = 0; index < messages.length; index++) events.push({ operationId: operation.id, kind: 'message', version: operation.version });
  return events;
}

/**
 * `base` after the commit: the patch as a full read would return it (the run context as stored, through
 * its JSON), the returned version, status and lease, and `now` as `updatedAt`.
 */
function patched(base: OperationRecord, patch: OperationPatch, raw: Record<string, unknown>, now: string): OperationRecord {
  const operation: OperationRecord = { ...base, version: Number(raw['version']), status: raw['status'] as OperationRecord['status'], updatedAt: now };
  if (patch.stepIndex !== undefined) operation.stepIndex = patch.stepIndex;
  if (patch.usage !== undefined) operation.usage = { inputTokens: patch.usage.inputTokens, outputTokens: patch.usage.outputTokens, costUsd: patch.usage.costUsd };
  if (patch.runContext !== undefined) operation.runContext = JSON.parse(JSON.stringify(toStoredRunContext(patch.runContext))) as OperationRecord['runContext'];
  if (patch.compaction !== undefined) operation.compaction = { groupId: patch.compaction.groupId, summary: patch.compaction.summary, throughSeq: patch.compaction.throughSeq };
  const leaseOwner = raw['lease_owner'];
  const leaseUntil = raw['lease_until'];
  if (typeof leaseOwner === 'string') operation.leaseOwner = leaseOwner;
  else delete operation.leaseOwner;
  if (typeof leaseUntil === 'string') operation.leaseUntil = leaseUntil;
  else delete operation.leaseUntil;
  return operation;
}
