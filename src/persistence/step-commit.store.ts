/**
 * A step's effects, committed as one: messages (the assistant's answer, a published tool result) and the
 * operation's new state (step index, usage totals, status, run context), in one transaction guarded by
 * the optimistic version — and, for a worker holding a lease, by the lease owner (a fencing check: a
 * worker whose lease was taken over cannot commit). If any write fails, nothing is written (P1: a result
 * is published with its state change or not at all).
 *
 * Order inside the transaction: the conditional UPDATE of the operation first — on PostgreSQL it holds
 * the row, so a concurrent commit of the same operation waits, then finds the version moved and fails —
 * then the messages, then a read of the new operation.
 */
import type { EntityManager } from 'typeorm';
import type { StepPatch } from '../runtime/runtime-store.port.js';
import { OperationEntity } from './entities/operation.entity.js';
import { insertMessages } from './message-writer.js';
import { OperationNotFoundError, StaleOperationError } from './persistence-errors.js';
import { toOperationRecord } from './record-mappers.js';
import type { MessageRecord, NewMessage, NewToolMessage, OperationRecord } from './records.js';
import { toStoredRunContext, type RunContextSource } from './run-context-snapshot.js';
import { StoreDatabase, type StoreSource } from './store-database.js';
import { nowIso, type StoreOptions } from './store-options.js';
import { updateValues } from './entity-values.js';

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
}

export interface StepCommitResult {
  /** The operation after the commit (version + 1). */
  operation: OperationRecord;
  messages: MessageRecord[];
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
}

export class StepCommitStore {
  private readonly db: StoreDatabase;

  constructor(
    source: StoreSource,
    private readonly options: StepCommitOptions = {},
  ) {
    this.db = StoreDatabase.of(source);
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
    return this.db.transaction(async (manager, events) => {
      const now = nowIso(this.options);
      await this.updateOperation(manager, input, now);
      await this.options.failpoints?.afterOperationUpdate?.(input.operationId, input);
      const messages = await insertMessages(manager, input.operationId, input.messages ?? [], now);
      const operation = await manager.findOneByOrFail(OperationEntity, { id: input.operationId });
      // Out after the commit, never for a rollback (DESIGN §4).
      events.publish({ operationId: input.operationId, kind: 'status', status: operation.status, version: operation.version });
      for (let index = 0; index < messages.length; index++) events.publish({ operationId: input.operationId, kind: 'message', version: operation.version });
      return { operation: toOperationRecord(operation), messages };
    });
  }

  /** Publishes one tool result (P1) with its state change: `commit` with exactly that message. */
  async publishToolResult(input: ToolResultPublish): Promise<StepCommitResult & { message: MessageRecord }> {
    const { message, ...rest } = input;
    const result = await this.commit({ ...rest, messages: [message] });
    return { ...result, message: result.messages[0]! };
  }

  private async updateOperation(manager: EntityManager, input: StepCommit, now: string): Promise<void> {
    const { patch = {} } = input;
    const values: Partial<OperationEntity> = { updatedAt: now };
    if (patch.stepIndex !== undefined) values.stepIndex = patch.stepIndex;
    if (patch.status !== undefined) values.status = patch.status;
    if (patch.runContext !== undefined) values.runContext = toStoredRunContext(patch.runContext);
    if (patch.compaction !== undefined) {
      values.compactionGroupId = patch.compaction.groupId;
      values.compactionSummary = patch.compaction.summary;
      values.compactedThroughSeq = patch.compaction.throughSeq;
    }
    if (patch.usage !== undefined) {
      values.inputTokens = patch.usage.inputTokens;
      values.outputTokens = patch.usage.outputTokens;
      values.costUsd = patch.usage.costUsd;
    }
    const query = manager
      .createQueryBuilder()
      .update(OperationEntity)
      .set(updateValues<OperationEntity>({ ...values, version: () => '"version" + 1' }))
      .where('"id" = :operationId AND "version" = :expectedVersion AND "status" <> :completed', {
        operationId: input.operationId,
        expectedVersion: input.expectedVersion,
        completed: 'completed',
      });
    if (input.leaseOwner !== undefined) query.andWhere('"lease_owner" = :leaseOwner', { leaseOwner: input.leaseOwner });
    const result = await query.execute();
    if (result.affected === 1) return;
    const exists = await manager.existsBy(OperationEntity, { id: input.operationId });
    throw exists
      ? new StaleOperationError(input.operationId, input.expectedVersion)
      : new OperationNotFoundError(input.operationId);
  }
}
