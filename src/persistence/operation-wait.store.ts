/**
 * The transactions of an operation that waits for someone else (Runtime II): human approvals and deferred
 * results. Each one holds the operation's row (`lockOperationRow`) so writers of one operation take turns,
 * and each is all or nothing:
 * - `record`: interventions a step needs, with the empty placeholder of each deferred call, once (a retried
 *   step finds them recorded and adds nothing);
 * - `pause`: running → waiting, only while something is still pending (a deferred result that arrived
 *   during the step means there is nothing to wait for);
 * - `resume`: waiting → running, only when nothing is pending any more — of two callers resolving the last
 *   two items at once, exactly one resumes;
 * - `publishDeferred`: the compare-and-set on the empty placeholder (L4), the published tool message and
 *   the intervention's completion. The first final write wins; every later one changes nothing;
 * - `decide`: a human decision on a pending approval;
 * and neither `publishDeferred` nor `decide` writes anything once the operation is completed (G5).
 * None of them touch the optimistic version except the status transitions, so a step that is still
 * running is not made stale by a deferred result published beside it.
 */
import type { DataSource, EntityManager } from 'typeorm';
import type { ToolResult } from '../hooks/agent-events.js';
import { InterventionEntity } from './entities/intervention.entity.js';
import { OperationEntity } from './entities/operation.entity.js';
import { ToolResultPlaceholderEntity } from './entities/tool-result-placeholder.entity.js';
import { insertValues, updateValues } from './entity-values.js';
import { decisionValues, pendingInterventionRow, type InterventionDecision } from './intervention.store.js';
import { insertMessages } from './message-writer.js';
import { lockOperationRow } from './operation-row-lock.js';
import { OperationNotFoundError } from './persistence-errors.js';
import type { MessageRecord, NewIntervention, NewToolMessage } from './records.js';
import { StoreDatabase } from './store-database.js';
import { nowIso, type StoreOptions } from './store-options.js';

export type PublishDeferredResult =
  | { published: true; message: MessageRecord }
  /** `already_final`: the placeholder was final, missing, or claimed by another decider; `operation_completed`: G5. */
  | { published: false; reason: 'already_final' | 'operation_completed' };

/** What a human decision met, read under the operation's row lock. */
export type DecideOutcome = 'decided' | 'not_pending' | 'operation_completed';

export class OperationWaitStore {
  private readonly db: StoreDatabase;

  constructor(
    dataSource: DataSource,
    private readonly options: StoreOptions = {},
  ) {
    this.db = StoreDatabase.for(dataSource);
  }

  /** Records the interventions not recorded yet (deferred ones with an empty placeholder); returns how many were new. */
  record(operationId: string, items: readonly NewIntervention[]): Promise<number> {
    if (items.length === 0) return Promise.resolve(0);
    return this.db.transaction(async (manager) => {
      await this.lock(manager, operationId);
      const existing = await manager.find(InterventionEntity, { where: { operationId }, select: { toolCallId: true } });
      const known = new Set(existing.map((row) => row.toolCallId));
      const now = nowIso(this.options);
      const fresh = items.filter((item) => !known.has(item.toolCallId));
      for (const item of fresh) {
        const row = pendingInterventionRow(operationId, item, now);
        await manager.createQueryBuilder().insert().into(InterventionEntity).values(insertValues(row)).updateEntity(false).execute();
        if (item.kind === 'deferred') {
          const placeholder: ToolResultPlaceholderEntity = {
            operationId,
            toolCallId: item.toolCallId,
            state: 'empty',
            result: null,
            createdAt: now,
            finalizedAt: null,
            claimedBy: null,
            claimedUntil: null,
          };
          await manager.createQueryBuilder().insert().into(ToolResultPlaceholderEntity).values(insertValues(placeholder)).updateEntity(false).execute();
        }
      }
      return fresh.length;
    });
  }

  /** running → waiting if some intervention is still pending: true when the operation now waits. */
  pause(operationId: string): Promise<boolean> {
    return this.transition(operationId, 'running', 'waiting', (pending) => pending > 0);
  }

  /** waiting → running once nothing is pending: true for the one caller that resumed it. */
  resume(operationId: string): Promise<boolean> {
    return this.transition(operationId, 'waiting', 'running', (pending) => pending === 0);
  }

  /**
   * Publishes a deferred result: finalizes the empty placeholder, appends the tool message and completes the
   * intervention (keeping `reply` private), in one transaction. Nothing is written when the operation is
   * completed — read under its row lock, so a concurrent cancel is either before (refused) or after (G5) —
   * or when the placeholder was already final (or never existed), or, given `claimant`, is not held by it.
   */
  publishDeferred(
    operationId: string,
    toolCallId: string,
    result: ToolResult,
    message: NewToolMessage,
    options: { reply?: unknown; claimant?: string } = {},
  ): Promise<PublishDeferredResult> {
    return this.db.transaction(async (manager) => {
      const operation = await this.lock(manager, operationId);
      if (operation.status === 'completed') return { published: false, reason: 'operation_completed' };
      const now = nowIso(this.options);
      const finalize = manager
        .createQueryBuilder()
        .update(ToolResultPlaceholderEntity)
        .set(updateValues<ToolResultPlaceholderEntity>({ state: 'final', result, finalizedAt: now, claimedBy: null, claimedUntil: null }))
        .where('"operation_id" = :operationId AND "tool_call_id" = :toolCallId AND "state" = :empty', { operationId, toolCallId, empty: 'empty' });
      // A decider whose claim lapsed and was taken over has lost: the current claimant publishes.
      if (options.claimant !== undefined) finalize.andWhere('"claimed_by" = :claimant', { claimant: options.claimant });
      const finalized = await finalize.execute();
      if (finalized.affected !== 1) return { published: false, reason: 'already_final' };
      const [published] = await insertMessages(manager, operationId, [message], now);
      await manager
        .createQueryBuilder()
        .update(InterventionEntity)
        .set(updateValues<InterventionEntity>({ status: 'completed', reply: options.reply ?? null, updatedAt: now }))
        .where('"operation_id" = :operationId AND "tool_call_id" = :toolCallId', { operationId, toolCallId })
        .execute();
      return { published: true, message: published! };
    });
  }

  /**
   * Decides a pending approval once, unless the operation is completed (G5): the operation's row is held
   * while the decision is written, so a concurrent terminal transition comes wholly before or after it.
   */
  decide(operationId: string, toolCallId: string, decision: InterventionDecision): Promise<DecideOutcome> {
    return this.db.transaction(async (manager) => {
      const operation = await this.lock(manager, operationId);
      if (operation.status === 'completed') return 'operation_completed';
      const result = await manager
        .createQueryBuilder()
        .update(InterventionEntity)
        .set(updateValues<InterventionEntity>(decisionValues(decision, nowIso(this.options))))
        .where('"operation_id" = :operationId AND "tool_call_id" = :toolCallId AND "status" = :pending AND "kind" = :approval', {
          operationId,
          toolCallId,
          pending: 'pending',
          approval: 'approval',
        })
        .execute();
      return result.affected === 1 ? 'decided' : 'not_pending';
    });
  }

  private transition(
    operationId: string,
    from: 'running' | 'waiting',
    to: 'running' | 'waiting',
    allowed: (pending: number) => boolean,
  ): Promise<boolean> {
    return this.db.transaction(async (manager) => {
      const row = await this.lock(manager, operationId);
      if (row.status !== from) return false;
      const pending = await manager.countBy(InterventionEntity, { operationId, status: 'pending' });
      if (!allowed(pending)) return false;
      const now = nowIso(this.options);
      const result = await manager
        .createQueryBuilder()
        .update(OperationEntity)
        .set(updateValues<OperationEntity>({ status: to, updatedAt: now, version: () => '"version" + 1' }))
        .where('"id" = :operationId AND "status" = :from', { operationId, from })
        .execute();
      return result.affected === 1;
    });
  }

  private async lock(manager: EntityManager, operationId: string): Promise<OperationEntity> {
    const row = await lockOperationRow(manager, this.db.dialect, operationId);
    if (!row) throw new OperationNotFoundError(operationId);
    return row;
  }
}
