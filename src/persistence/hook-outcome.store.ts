/**
 * The timeline rows (`GET /v1/operations/:id/timeline`). Written in batches by `OutcomeBatcher`. `seq`
 * counts 1, 2, … within each operation (DESIGN §7). On PostgreSQL one counter upsert and one multi-row
 * INSERT per batch: the upsert reserves a range per operation in `agent_hooks_timeline_counters`, whose row
 * lock makes writers in other processes take turns. On SQLite (one writer at a time) each row's INSERT
 * takes the next number from the unique `(operation_id, operation_seq)` index itself, in one transaction
 * (the step commit's, when it carries them); the counters table is not used there.
 */
import { HookOutcomeEntity } from './entities/hook-outcome.entity.js';
import { toHookOutcomeRow } from './record-mappers.js';
import type { HookOutcomeRow, NewHookOutcome } from './records.js';
import type { SqlStatement } from './sql-session.js';
import type { StoreDatabase } from './store-database.js';

/** Rows per INSERT on PostgreSQL: 10 parameters each keeps a statement far below its bound-parameter limit. */
const ROWS_PER_INSERT = 500;
const COLUMNS = ['operation_id', 'operation_seq', 'at', 'point', 'hook_id', 'source', 'outcome', 'error_code', 'latency_ms', 'tool_call_id'].map((name) => `"${name}"`);

interface CounterRow {
  operation_id: string;
  last_seq: number | string;
}

/** The parameters of `sqliteInsert` for one row (`$1`, the operation id, also names the operation its `seq` is counted in). */
function sqliteRow(o: NewHookOutcome): unknown[] {
  return [o.operationId, o.at, o.point, o.hookId, o.source, o.outcome, o.errorCode ?? null, o.latencyMs, o.toolCallId ?? null];
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
  private sqliteInsertSql: string | undefined;

  constructor(database: StoreDatabase) {
    this.db = database;
  }

  /**
   * Inserts `outcomes` in order, all or none (rows get increasing `seq` in that order). Plain parameterized
   * SQL rather than the query builder: this runs for every hook invocation, and the builder's per-row work
   * would weigh on every hooked step. How the numbers are taken differs (see above), so the statements do.
   */
  async append(outcomes: readonly NewHookOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    if (this.db.dialect === 'sqlite') {
      await this.db.session.batch(this.sqliteStatements(outcomes));
      return;
    }
    await this.db.session.transaction(async (tx) => {
      const counted = this.counterUpsert(outcomes);
      const rows = (await tx.query(counted.sql, counted.params)).records as unknown as CounterRow[];
      for (const insert of this.inserts(outcomes, firstSeqs(rows, counted.counts))) await tx.query(insert.sql, insert.params);
    });
  }

  /**
   * SQLite: one INSERT per row, each taking the next `seq` of its operation from the unique
   * `(operation_id, operation_seq)` index: SQLite has one writer at a time and a writing statement holds the
   * write lock before it reads, so no counter row is needed (PostgreSQL's row lock on
   * `agent_hooks_timeline_counters` does that job there). Run in one transaction — the step commit's, when
   * it carries them (`StepCommit.timeline`).
   */
  sqliteStatements(outcomes: readonly NewHookOutcome[]): SqlStatement[] {
    const sql = this.sqliteInsert();
    return outcomes.map((outcome) => ({ sql, params: sqliteRow(outcome) }));
  }

  private sqliteInsert(): string {
    const table = this.db.table('agent_hooks_hook_outcomes');
    return (this.sqliteInsertSql ??= `INSERT INTO ${table} (${COLUMNS.join(', ')}) SELECT $1, COALESCE(MAX("operation_seq"), 0) + 1, $2, $3, $4, $5, $6, $7, $8, $9 FROM ${table} WHERE "operation_id" = $1`);
  }

  /** The INSERTs of the rows, at most ROWS_PER_INSERT each, numbered on from each operation's first `seq`. */
  private inserts(outcomes: readonly NewHookOutcome[], next: Map<string, number>): { sql: string; params: unknown[] }[] {
    const table = this.db.table('agent_hooks_hook_outcomes');
    const statements: { sql: string; params: unknown[] }[] = [];
    for (let start = 0; start < outcomes.length; start += ROWS_PER_INSERT) {
      const chunk = outcomes.slice(start, start + ROWS_PER_INSERT);
      const params: unknown[] = [];
      const tuples = chunk.map((outcome) => {
        const first = params.length;
        const seq = next.get(outcome.operationId)!;
        next.set(outcome.operationId, seq + 1);
        params.push(outcome.operationId, seq, outcome.at, outcome.point, outcome.hookId, outcome.source, outcome.outcome, outcome.errorCode ?? null, outcome.latencyMs, outcome.toolCallId ?? null);
        const marks = COLUMNS.map((_, i) => `$${first + i + 1}`);
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
  private counterUpsert(outcomes: readonly NewHookOutcome[]): { sql: string; params: unknown[]; counts: Map<string, number> } {
    const counts = new Map<string, number>();
    for (const { operationId } of outcomes) counts.set(operationId, (counts.get(operationId) ?? 0) + 1);
    const ids = [...counts.keys()].sort();
    const params = ids.flatMap((id) => [id, counts.get(id)!]);
    const tuples = ids.map((_, i) => `($${2 * i + 1}, $${2 * i + 2})`);
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
