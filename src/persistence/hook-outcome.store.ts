/**
 * The timeline rows (`GET /v1/operations/:id/timeline`). Written in batches by `OutcomeBatcher` — one
 * counter upsert and one multi-row INSERT per batch, so recording outcomes costs a step two statements per
 * batch instead of one per hook invocation. `seq` counts 1, 2, … within each operation (DESIGN §7): the
 * upsert reserves a range per operation in `agent_hooks_timeline_counters`, whose row lock makes writers
 * in other processes take turns (no `MAX(seq)` read).
 */
import { HookOutcomeEntity } from './entities/hook-outcome.entity.js';
import { NativeSqliteStatements } from './native-sqlite.js';
import { toHookOutcomeRow } from './record-mappers.js';
import type { HookOutcomeRow, NewHookOutcome } from './records.js';
import { asQueryFailed } from './sql-errors.js';
import type { StoreDatabase } from './store-database.js';

/** Rows per INSERT: 9 parameters each keeps a statement far below both drivers' bound-parameter limits. */
const ROWS_PER_INSERT = 500;
const COLUMNS = ['operation_id', 'operation_seq', 'at', 'point', 'hook_id', 'source', 'outcome', 'error_code', 'latency_ms'].map((name) => `"${name}"`);

interface CounterRow {
  operation_id: string;
  last_seq: number | string;
}

/** Each operation's first reserved `seq`, from the counters' new last numbers and the batch's counts. */
function firstSeqs(rows: readonly CounterRow[], counts: ReadonlyMap<string, number>): Map<string, number> {
  const first = new Map<string, number>();
  for (const row of rows) first.set(row.operation_id, Number(row.last_seq) - counts.get(row.operation_id)! + 1);
  return first;
}

export interface TimelinePage {
  /** Only rows with a greater `seq` (for polling or paging). */
  afterSeq?: number;
  limit?: number;
}

export class HookOutcomeStore {
  private readonly db: StoreDatabase;
  private nativeStatements: NativeSqliteStatements | undefined;

  constructor(database: StoreDatabase) {
    this.db = database;
  }

  /**
   * Inserts `outcomes` in order, all or none (rows get increasing `seq` in that order). Plain parameterized
   * SQL rather than the query builder: this runs for every hook invocation, and the builder's per-row work
   * was most of a hooked step's overhead (bench:runtime). On SQLite in better-sqlite3's own synchronous
   * transaction with prepared statements, as the step commit: TypeORM's transaction machinery was most of
   * what a batch still cost.
   */
  async append(outcomes: readonly NewHookOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    const postgres = this.db.dialect === 'postgres';
    if (!postgres) return this.appendOnSqlite(outcomes);
    await this.db.transaction(async (manager) => {
      const counted = this.counterUpsert(outcomes, true);
      const rows = (await manager.query(counted.sql, counted.params)) as CounterRow[];
      for (const insert of this.inserts(outcomes, firstSeqs(rows, counted.counts), true)) await manager.query(insert.sql, insert.params);
    });
  }

  private async appendOnSqlite(outcomes: readonly NewHookOutcome[]): Promise<void> {
    await this.db.run(async () => this.native().db.transaction(() => this.writeOnSqlite(outcomes))());
  }

  /**
   * SQLite: writes `outcomes` inside the better-sqlite3 transaction the caller has open, within the store
   * gate (the step commit writes a step's timeline with it: one transaction instead of two).
   */
  writeOnSqlite(outcomes: readonly NewHookOutcome[]): void {
    if (outcomes.length === 0) return;
    const native = this.native();
    const counted = this.counterUpsert(outcomes, false);
    let sql = counted.sql;
    try {
      const rows = native.prepared(counted.sql).all(counted.params) as unknown as CounterRow[];
      for (const insert of this.inserts(outcomes, firstSeqs(rows, counted.counts), false)) {
        sql = insert.sql;
        native.prepared(insert.sql).run(insert.params);
      }
    } catch (error) {
      throw asQueryFailed(sql, error);
    }
  }

  private native(): NativeSqliteStatements {
    return (this.nativeStatements ??= new NativeSqliteStatements(this.db.dataSource));
  }

  /** The INSERTs of the rows, at most ROWS_PER_INSERT each, numbered on from each operation's first `seq`. */
  private inserts(outcomes: readonly NewHookOutcome[], next: Map<string, number>, postgres: boolean): { sql: string; params: unknown[] }[] {
    const table = this.db.table('agent_hooks_hook_outcomes');
    const statements: { sql: string; params: unknown[] }[] = [];
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
      statements.push({ sql: `INSERT INTO ${table} (${COLUMNS.join(', ')}) VALUES ${tuples.join(', ')}`, params });
    }
    return statements;
  }

  /**
   * Reserves, per operation of the batch, as many numbers as it has rows: one upsert for the whole batch
   * (ids in sorted order, so two writers lock counter rows in the same order); it answers each operation's
   * last number (`firstSeqs` turns that into its first).
   */
  private counterUpsert(outcomes: readonly NewHookOutcome[], postgres: boolean): { sql: string; params: unknown[]; counts: Map<string, number> } {
    const counts = new Map<string, number>();
    for (const { operationId } of outcomes) counts.set(operationId, (counts.get(operationId) ?? 0) + 1);
    const ids = [...counts.keys()].sort();
    const params = ids.flatMap((id) => [id, counts.get(id)!]);
    const tuples = ids.map((_, i) => (postgres ? `($${2 * i + 1}, $${2 * i + 2})` : '(?, ?)'));
    const counters = this.db.table('agent_hooks_timeline_counters');
    const sql =
      `INSERT INTO ${counters} ("operation_id", "last_seq") VALUES ${tuples.join(', ')} ` +
      `ON CONFLICT ("operation_id") DO UPDATE SET "last_seq" = "agent_hooks_timeline_counters"."last_seq" + excluded."last_seq" RETURNING "operation_id", "last_seq"`;
    return { sql, params, counts };
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
