/**
 * Retention (`agentctl purge --older-than 30d`): deletes completed operations that finished before a
 * cutoff, with everything that belongs to them — messages, caller hooks, timeline rows, interventions,
 * placeholders and owed notifications. Running and waiting operations are never touched, however old. Works in batches, each
 * its own transaction, so a large purge neither holds long locks nor leaves an operation half-deleted.
 */
import type { EntityManager } from 'typeorm';
import { HookOutcomeEntity } from './entities/hook-outcome.entity.js';
import { InterventionEntity } from './entities/intervention.entity.js';
import { MessageEntity } from './entities/message.entity.js';
import { OperationCallerHookEntity } from './entities/operation-caller-hook.entity.js';
import { OperationEntity } from './entities/operation.entity.js';
import { OwedWorkEntity } from './entities/owed-work.entity.js';
import { TimelineCounterEntity } from './entities/timeline-counter.entity.js';
import { ToolResultPlaceholderEntity } from './entities/tool-result-placeholder.entity.js';
import type { StoreDatabase } from './store-database.js';
import type { PurgeCounts } from '../runtime/database-maintenance.port.js';

export type { PurgeCounts } from '../runtime/database-maintenance.port.js';

export interface PurgeOptions {
  /** Operations per transaction. Default 200. */
  batchSize?: number;
}

const CHILDREN = [
  ['messages', MessageEntity],
  ['callerHooks', OperationCallerHookEntity],
  ['hookOutcomes', HookOutcomeEntity],
  ['interventions', InterventionEntity],
  ['placeholders', ToolResultPlaceholderEntity],
] as const;

export class RetentionStore {
  private readonly db: StoreDatabase;

  constructor(database: StoreDatabase) {
    this.db = database;
  }

  /** Deletes operations completed strictly before `cutoff`, and their rows; returns what was deleted. */
  async purgeCompletedBefore(cutoff: Date, options: PurgeOptions = {}): Promise<PurgeCounts> {
    const batchSize = Math.max(1, options.batchSize ?? 200);
    const totals: PurgeCounts = { operations: 0, messages: 0, callerHooks: 0, hookOutcomes: 0, interventions: 0, placeholders: 0 };
    for (;;) {
      const batch = await this.db.transaction((manager) => this.purgeBatch(manager, cutoff.toISOString(), batchSize));
      for (const key of Object.keys(totals) as (keyof PurgeCounts)[]) totals[key] += batch[key];
      if (batch.operations < batchSize) return totals;
    }
  }

  private async purgeBatch(manager: EntityManager, cutoff: string, batchSize: number): Promise<PurgeCounts> {
    const rows = await manager
      .createQueryBuilder(OperationEntity, 'operation')
      .select('operation.id', 'id')
      .where('operation.status = :completed', { completed: 'completed' })
      .andWhere('operation.completedAt < :cutoff', { cutoff })
      .orderBy('operation.completedAt', 'ASC')
      .limit(batchSize)
      .getRawMany<{ id: string }>();
    const ids = rows.map((row) => row.id);
    const counts: PurgeCounts = { operations: 0, messages: 0, callerHooks: 0, hookOutcomes: 0, interventions: 0, placeholders: 0 };
    if (ids.length === 0) return counts;
    for (const [key, entity] of CHILDREN) {
      const result = await manager
        .createQueryBuilder()
        .delete()
        .from(entity)
        .where('"operation_id" IN (:...ids)', { ids })
        .execute();
      counts[key] = result.affected ?? 0;
    }
    // The timeline's numbering goes with its rows (bookkeeping, not counted).
    await manager.createQueryBuilder().delete().from(TimelineCounterEntity).where('"operation_id" IN (:...ids)', { ids }).execute();
    // So are its owed notifications (delivered long ago, or owed to an operation that is gone).
    await manager.createQueryBuilder().delete().from(OwedWorkEntity).where('"operation_id" IN (:...ids)', { ids }).execute();
    // Re-checked here: an operation cannot leave `completed`, but the condition keeps the delete honest.
    const deleted = await manager
      .createQueryBuilder()
      .delete()
      .from(OperationEntity)
      .where('"id" IN (:...ids) AND "status" = :completed', { ids, completed: 'completed' })
      .execute();
    counts.operations = deleted.affected ?? 0;
    return counts;
  }
}
