/**
 * The timeline rows (`GET /v1/operations/:id/timeline`). Written in batches by `OutcomeBatcher` — one
 * multi-row INSERT per batch, so recording outcomes costs a step one round trip per batch instead of one
 * per hook invocation.
 */
import type { DataSource } from 'typeorm';
import { HookOutcomeEntity } from './entities/hook-outcome.entity.js';
import { insertValues } from './entity-values.js';
import { toHookOutcomeRow } from './record-mappers.js';
import type { HookOutcomeRow, NewHookOutcome } from './records.js';
import { StoreDatabase } from './store-database.js';

/** Rows per INSERT: 9 parameters each keeps a statement far below both drivers' bound-parameter limits. */
const ROWS_PER_INSERT = 500;

export interface TimelinePage {
  /** Only rows with a greater `seq` (for polling or paging). */
  afterSeq?: number;
  limit?: number;
}

export class HookOutcomeStore {
  private readonly db: StoreDatabase;

  constructor(dataSource: DataSource) {
    this.db = StoreDatabase.for(dataSource);
  }

  /** Inserts `outcomes` in order, all or none (rows get increasing `seq` in that order). */
  async append(outcomes: readonly NewHookOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    const rows = outcomes.map((outcome) =>
      insertValues<Omit<HookOutcomeEntity, 'seq'>>({
        operationId: outcome.operationId,
        at: outcome.at,
        point: outcome.point,
        hookId: outcome.hookId,
        source: outcome.source,
        outcome: outcome.outcome,
        errorCode: outcome.errorCode ?? null,
        latencyMs: outcome.latencyMs,
      }),
    );
    await this.db.transaction(async (manager) => {
      for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
        await manager
          .createQueryBuilder()
          .insert()
          .into(HookOutcomeEntity)
          .values(rows.slice(start, start + ROWS_PER_INSERT))
          .updateEntity(false)
          .execute();
      }
    });
  }

  /** An operation's timeline in `seq` order. */
  async listByOperation(operationId: string, page: TimelinePage = {}): Promise<HookOutcomeRow[]> {
    const rows = await this.db.run((manager) => {
      const query = manager
        .createQueryBuilder(HookOutcomeEntity, 'outcome')
        .where('outcome.operationId = :operationId', { operationId })
        .orderBy('outcome.seq', 'ASC');
      if (page.afterSeq !== undefined) query.andWhere('outcome.seq > :afterSeq', { afterSeq: page.afterSeq });
      if (page.limit !== undefined) query.limit(page.limit);
      return query.getMany();
    });
    return rows.map(toHookOutcomeRow);
  }
}
