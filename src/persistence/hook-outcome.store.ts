/**
 * The timeline rows (`GET /v1/operations/:id/timeline`). Written in batches by `OutcomeBatcher` — one
 * counter upsert and one multi-row INSERT per batch, so recording outcomes costs a step two statements per
 * batch instead of one per hook invocation. `seq` counts 1, 2, … within each operation (DESIGN §7): the
 * upsert reserves a range per operation in `agent_hooks_timeline_counters`, whose row lock makes writers
 * in other processes take turns (no `MAX(seq)` read).
 */
import type { EntityManager } from 'typeorm';
import { HookOutcomeEntity } from './entities/hook-outcome.entity.js';
import { toHookOutcomeRow } from './record-mappers.js';
import type { HookOutcomeRow, NewHookOutcome } from './records.js';
import type { StoreDatabase } from './store-database.js';

/** Rows per INSERT: 9 parameters each keeps a statement far below both drivers' bound-parameter limits. */
const ROWS_PER_INSERT = 500;
const COLUMNS = ['operation_id', 'operation_seq', 'at', 'point', 'hook_id', 'source', 'outcome', 'error_code', 'latency_ms'].map((name) => `"${name}"`);

export interface TimelinePage {
  /** Only rows with a greater `seq` (for polling or paging). */
  afterSeq?: number;
  limit?: number;
}

export class HookOutcomeStore {
  private readonly db: StoreDatabase;

  constructor(database: StoreDatabase) {
    this.db = database;
  }

  /**
   * Inserts `outcomes` in order, all or none (rows get increasing `seq` in that order). Plain parameterized
   * SQL rather than the query builder: this runs for every hook invocation, and the builder's per-row work
   * was most of a hooked step's overhead (bench:runtime).
   */
  async append(outcomes: readonly NewHookOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    const postgres = this.db.dialect === 'postgres';
    const table = this.db.table('agent_hooks_hook_outcomes');
    await this.db.transaction(async (manager) => {
      const next = await this.reserveSeqs(manager, outcomes, postgres);
      for (let start = 0; start < outcomes.length; start += ROWS_PER_INSERT) {
        const chunk = outcomes.slice(start, start + ROWS_PER_INSERT);
        const params: unknown[] = [];
        const tuples = chunk.map((outcome) => {
          const first = params.length;
          const seq = next.get(outcome.operationId)!;
          next.set(outcome.operationId, seq + 1);
          params.push(outcome.operationId, seq, outcome.at, outcome.point, outcome.hookId, outcome.source, outcome.outcome, outcome.errorCode ?? null, outcome.latencyMs);
          const marks = COLUMNS.map((_, i) => (postgres ? `$${first + i + 1}` : '?'));
          return `(${marks.join(', ')})`;
        });
        await manager.query(`INSERT INTO ${table} (${COLUMNS.join(', ')}) VALUES ${tuples.join(', ')}`, params);
      }
    });
  }

  /**
   * Reserves, per operation of the batch, as many numbers as it has rows: one upsert for the whole batch
   * (ids in sorted order, so two writers lock counter rows in the same order). Answers each operation's
   * first number.
   */
  private async reserveSeqs(manager: EntityManager, outcomes: readonly NewHookOutcome[], postgres: boolean): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const { operationId } of outcomes) counts.set(operationId, (counts.get(operationId) ?? 0) + 1);
    const ids = [...counts.keys()].sort();
    const params = ids.flatMap((id) => [id, counts.get(id)!]);
    const tuples = ids.map((_, i) => (postgres ? `($${2 * i + 1}, $${2 * i + 2})` : '(?, ?)'));
    const counters = this.db.table('agent_hooks_timeline_counters');
    const rows = (await manager.query(
      `INSERT INTO ${counters} ("operation_id", "last_seq") VALUES ${tuples.join(', ')} ` +
        `ON CONFLICT ("operation_id") DO UPDATE SET "last_seq" = "agent_hooks_timeline_counters"."last_seq" + excluded."last_seq" RETURNING "operation_id", "last_seq"`,
      params,
    )) as { operation_id: string; last_seq: number | string }[];
    const first = new Map<string, number>();
    for (const row of rows) first.set(row.operation_id, Number(row.last_seq) - counts.get(row.operation_id)! + 1);
    return first;
  }

  /** An operation's timeline in `seq` order (1, 2, … within the operation). */
  async listByOperation(operationId: string, page: TimelinePage = {}): Promise<HookOutcomeRow[]> {
    const rows = await this.db.run((manager) => {
      const query = manager
        .createQueryBuilder(HookOutcomeEntity, 'outcome')
        .where('outcome.operationId = :operationId', { operationId })
        .orderBy('outcome.operationSeq', 'ASC')
        .addOrderBy('outcome.seq', 'ASC');
      if (page.afterSeq !== undefined) query.andWhere('outcome.operationSeq > :afterSeq', { afterSeq: page.afterSeq });
      if (page.limit !== undefined) query.limit(page.limit);
      return query.getMany();
    });
    return rows.map(toHookOutcomeRow);
  }
}
