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
 * statements in one transaction. Both through the store's `SqlSession`, in one body.
 */
import type { OperationEvent } from '../runtime/operation-events.port.js';
import type { StepPatch } from '../runtime/runtime-store.port.js';
import { qualifiedTable } from './dialect.js';
import { EntityColumns } from './entity-columns.js';
import { MessageEntity } from './entities/message.entity.js';
import { OperationEntity } from './entities/operation.entity.js';
import { toMessageRow } from './message-writer.js';
import { OperationNotFoundError, StaleOperationError } from './persistence-errors.js';
import { toMessageRecord, toOperationRecord } from './record-mappers.js';
import type { HookOutcomeStore } from './hook-outcome.store.js';
import type { MessageRecord, NewHookOutcome, NewMessage, NewToolMessage, OperationRecord } from './records.js';
import { toStoredRunContext, type RunContextSource } from './run-context-snapshot.js';
import { stepCommitStatements, type CommitTables } from './step-commit.sql.js';
import type { StoreDatabase } from './store-database.js';
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

export interface StepCommitOptions extends StoreOptions {
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

  /**
   * Whether a commit's `timeline` rows are written in its transaction: on SQLite, where a statement more in
   * the commit's transaction costs less than a transaction of its own; on PostgreSQL the commit is one
   * statement and the timeline is flushed before it.
   */
  get writesTimeline(): boolean {
    return this.db.dialect === 'sqlite' && this.options.timeline !== undefined;
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
    const timeline = input.timeline ?? [];
    if (timeline.length > 0 && !this.writesTimeline) throw new TypeError('this commit store writes no timeline rows: see writesTimeline');
    return this.commitChecked(input, timeline);
  }

  private async commitChecked(input: StepCommit, timeline: readonly NewHookOutcome[]): Promise<StepCommitResult> {
    const now = nowIso(this.options);
    const rows = (input.messages ?? []).map((message) => toMessageRow(input.operationId, 0, message, now));
    const statements = stepCommitStatements(this.db.dialect, input, now, {
      tables: this.tables(),
      messageColumns: this.columns().messages,
      rows,
      channel: this.db.eventsChannel,
      origin: this.db.origin,
      timeline: timeline.length > 0 ? this.options.timeline!.sqliteStatements(timeline) : [],
      payload: (events) => this.db.notifyPayload(events),
    });
    const raw = await this.db.session.batch(statements, { guarded: true });
    if (!raw) throw await this.refusal(input);
    const committed = this.committed(input, now, raw, rows);
    // Out after the commit, never for a rollback (DESIGN §4); on PostgreSQL the statement notified the others.
    this.db.committedAlone(commitEvents(committed));
    return committed;
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
  private async refusal(input: StepCommit): Promise<Error> {
    const found = await this.db.query(`SELECT 1 AS "found" FROM ${this.tables().operations} WHERE "id" = $1`, [input.operationId]);
    return found.records.length > 0 ? new StaleOperationError(input.operationId, input.expectedVersion) : new OperationNotFoundError(input.operationId);
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
