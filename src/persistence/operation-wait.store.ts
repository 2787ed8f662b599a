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
 *   the intervention's completion. The first final write wins; every later one changes nothing.
 * None of them touch the optimistic version except the status transitions, so a step that is still
 * running is not made stale by a deferred result published beside it.
 */
import type { DataSource, EntityManager } from 'typeorm';
import type { ToolResult } from '../hooks/agent-events.js';
import { InterventionEntity } from './entities/intervention.entity.js';
import { OperationEntity } from './entities/operation.entity.js';
import { ToolResultPlaceholderEntity } from './entities/tool-result-placeholder.entity.js';
import { insertValues, updateValues } from './entity-values.js';
import { pendingInterventionRow } from './intervention.store.js';
import { insertMessages } from './message-writer.js';
import { lockOperationRow } from './operation-row-lock.js';
import { OperationNotFoundError } from './persistence-errors.js';
import type { MessageRecord, NewIntervention, NewToolMessage } from './records.js';
import { StoreDatabase } from './store-database.js';
import { nowIso, type StoreOptions } from './store-options.js';

export type PublishDeferredResult = { published: true; message: MessageRecord } | { published: false };

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
   * intervention (keeping `reply` private), in one transaction. `published: false` when the placeholder was
   * already final (or never existed): nothing is written.
   */
  publishDeferred(operationId: string, toolCallId: string, result: ToolResult, message: NewToolMessage, reply?: unknown): Promise<PublishDeferredResult> {
    return this.db.transaction(async (manager) => {
      await this.lock(manager, operationId);
      const now = nowIso(this.options);
      const finalized = await manager
        .createQueryBuilder()
        .update(ToolResultPlaceholderEntity)
        .set(updateValues<ToolResultPlaceholderEntity>({ state: 'final', result, finalizedAt: now }))
        .where('"operation_id" = :operationId AND "tool_call_id" = :toolCallId AND "state" = :empty', { operationId, toolCallId, empty: 'empty' })
        .execute();
      if (finalized.affected !== 1) return { published: false };
      const [published] = await insertMessages(manager, operationId, [message], now);
      await manager
        .createQueryBuilder()
        .update(InterventionEntity)
        .set(updateValues<InterventionEntity>({ status: 'completed', reply: reply ?? null, updatedAt: now }))
        .where('"operation_id" = :operationId AND "tool_call_id" = :toolCallId', { operationId, toolCallId })
        .execute();
      return { published: true, message: published! };
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
