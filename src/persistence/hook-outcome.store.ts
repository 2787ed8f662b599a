/**
 * The timeline rows (`GET /v1/operations/:id/timeline`). Written in batches by `OutcomeBatcher` — one
 * multi-row INSERT per batch, so recording outcomes costs a step one round trip per batch instead of one
 * per hook invocation.
 */
import type { DataSource } from 'typeorm';
import { HookOutcomeEntity } from './entities/hook-outcome.entity.js';
import { dialectOf, qualifiedTable } from './dialect.js';
import { toHookOutcomeRow } from './record-mappers.js';
import type { HookOutcomeRow, NewHookOutcome } from './records.js';
import { StoreDatabase } from './store-database.js';

/** Rows per INSERT: 9 parameters each keeps a statement far below both drivers' bound-parameter limits. */
const ROWS_PER_INSERT = 500;
const COLUMNS = ['operation_id', 'at', 'point', 'hook_id', 'source', 'outcome', 'error_code', 'latency_ms'].map((name) => `"${name}"`);

export interface TimelinePage {
  /** Only rows with a greater `seq` (for polling or paging). */
  afterSeq?: number;
  limit?: number;
}

export class HookOutcomeStore {
  private readonly db: StoreDatabase;

  constructor(private readonly dataSource: DataSource) {
    this.db = StoreDatabase.for(dataSource);
  }

  /**
   * Inserts `outcomes` in order, all or none (rows get increasing `seq` in that order). Plain parameterized
   * SQL rather than the query builder: this runs for every hook invocation, and the builder's per-row work
   * was most of a hooked step's overhead (bench:runtime).
   */
  async append(outcomes: readonly NewHookOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    const postgres = dialectOf(this.dataSource) === 'postgres';
    const table = qualifiedTable(this.dataSource, 'agent_hooks_hook_outcomes');
    await this.db.transaction(async (manager) => {
      for (let start = 0; start < outcomes.length; start += ROWS_PER_INSERT) {
        const chunk = outcomes.slice(start, start + ROWS_PER_INSERT);
        const params: unknown[] = [];
        const tuples = chunk.map((outcome) => {
          const first = params.length;
          params.push(outcome.operationId, outcome.at, outcome.point, outcome.hookId, outcome.source, outcome.outcome, outcome.errorCode ?? null, outcome.latencyMs);
          const marks = COLUMNS.map((_, i) => (postgres ? `$${first + i + 1}` : '?'));
          return `(${marks.join(', ')})`;
        });
        await manager.query(`INSERT INTO ${table} (${COLUMNS.join(', ')}) VALUES ${tuples.join(', ')}`, params);
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
