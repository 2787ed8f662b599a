/**
 * The SQL session on better-sqlite3: prepared statements of the driver's own handle, kept per SQL text
 * (a store has a handful of statement shapes). Statements are written with PostgreSQL's `$n` placeholders
 * and rewritten once per text to SQLite's `?` (a `$n` used twice binds its value twice).
 *
 * One connection serves every caller, TypeORM's own statements on the DataSource included: a transaction
 * begun while another is open would fail, and a statement issued meanwhile would join it. So every call
 * takes its turn through one FIFO gate (`exclusive`); the stores' TypeORM paths take it too
 * (`StoreDatabase`). better-sqlite3 runs statements synchronously, so the gate costs no parallelism; a call
 * made while nothing is queued runs at once.
 */
import type { SqlExecutor, SqlResult, SqlSession, SqlStatement } from './sql-session.js';
import { asQueryFailed } from './sql-errors.js';

/** What the session uses of better-sqlite3's `Database` (no bundled types are imported: the driver is optional). */
export interface BetterSqliteHandle {
  prepare(sql: string): BetterSqliteStatement;
}

export interface BetterSqliteStatement {
  /** Whether it returns rows (a SELECT, a `RETURNING` clause). */
  readonly reader: boolean;
  all(params: readonly unknown[]): Record<string, unknown>[];
  run(params: readonly unknown[]): { changes: number };
}

interface Prepared {
  statement: BetterSqliteStatement;
  /** For each `?` in order, the index of the parameter it binds (absent: `$1, $2, …` in order, each once). */
  order: number[] | undefined;
}

/** Prepared statements kept per SQL text (a step commit has a handful of shapes, a timeline batch one per size). */
const STATEMENTS_KEPT = 64;

export class BetterSqliteSession implements SqlSession {
  readonly dialect = 'sqlite' as const;
  private readonly statements = new Map<string, Prepared>();
  /** The end of the queue; each turn chains onto it. */
  private tail: Promise<unknown> = Promise.resolve();
  /** Turns running or waiting: none means a call may run at once. */
  private queued = 0;
  private readonly inTransaction: SqlExecutor = { dialect: 'sqlite', query: (sql, params) => this.now(sql, params) };

  constructor(private readonly handle: BetterSqliteHandle) {}

  query(sql: string, params: readonly unknown[]): Promise<SqlResult> {
    // Synchronous: nothing can interleave with it, so it needs no turn when nobody is queued.
    if (this.queued === 0) return this.now(sql, params);
    return this.exclusive(() => this.now(sql, params));
  }

  batch(statements: readonly SqlStatement[], options: { guarded?: boolean } = {}): Promise<Record<string, unknown> | undefined> {
    const run = () => {
      let current = statements[0]?.sql ?? '';
      try {
        if (statements.length === 1) return this.execute(current, statements[0]!.params).records[0];
        this.execute('BEGIN', []);
        try {
          let first: Record<string, unknown> | undefined;
          for (const [index, statement] of statements.entries()) {
            current = statement.sql;
            const result = this.execute(statement.sql, statement.params);
            if (index > 0) continue;
            first = result.records[0];
            if (options.guarded && (first === undefined || result.affected === 0)) break;
          }
          this.execute('COMMIT', []);
          return first;
        } catch (error) {
          this.execute('ROLLBACK', []);
          throw error;
        }
      } catch (error) {
        throw asQueryFailed(current, error);
      }
    };
    // Synchronous: nothing can interleave with it, so it needs no turn when nobody is queued.
    if (this.queued === 0) {
      try {
        return Promise.resolve(run());
      } catch (error) {
        return Promise.reject(error as Error);
      }
    }
    return this.exclusive(async () => run());
  }

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.exclusive(async () => {
      this.execute('BEGIN', []);
      let value: T;
      try {
        value = await work(this.inTransaction);
      } catch (error) {
        this.execute('ROLLBACK', []);
        throw error;
      }
      this.execute('COMMIT', []);
      return value;
    });
  }

  exclusive<T>(work: () => Promise<T>): Promise<T> {
    this.queued++;
    const turn = this.queued === 1 ? started(work) : this.tail.then(work);
    // The queue goes on whether this turn succeeds or fails; its caller sees its own result.
    this.tail = turn.then(
      () => void this.queued--,
      () => void this.queued--,
    );
    return turn;
  }

  private now(sql: string, params: readonly unknown[]): Promise<SqlResult> {
    try {
      return Promise.resolve(this.execute(sql, params));
    } catch (error) {
      return Promise.reject(asQueryFailed(sql, error) as Error);
    }
  }

  /** One statement, as TypeORM's better-sqlite3 query runner runs it (booleans bound as 0/1). */
  private execute(sql: string, params: readonly unknown[]): SqlResult {
    const { statement, order } = this.prepared(sql);
    const bound = (order ?? params.map((_, index) => index)).map((index) => sqliteValue(params[index]));
    if (statement.reader) {
      const records = statement.all(bound);
      return { records, affected: records.length };
    }
    return { records: [], affected: statement.run(bound).changes };
  }

  private prepared(sql: string): Prepared {
    let prepared = this.statements.get(sql);
    if (!prepared) {
      const { text, order } = positional(sql);
      prepared = { statement: this.handle.prepare(text), order };
      if (this.statements.size >= STATEMENTS_KEPT) this.statements.delete(this.statements.keys().next().value!);
      this.statements.set(sql, prepared);
    }
    return prepared;
  }
}

function started<T>(work: () => Promise<T>): Promise<T> {
  try {
    return work();
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

function sqliteValue(value: unknown): unknown {
  return typeof value === 'boolean' ? (value ? 1 : 0) : value;
}

/**
 * `$n` placeholders (outside quoted strings and identifiers) → `?`, with the parameter index each binds;
 * no order when they are `$1, $2, …` in order, each once.
 */
export function positional(sql: string): { text: string; order: number[] | undefined } {
  const order: number[] = [];
  let text = '';
  let quote: string | undefined;
  for (let i = 0; i < sql.length; i++) {
    const char = sql[i]!;
    if (quote) {
      if (char === quote) quote = undefined;
      text += char;
      continue;
    }
    if (char === "'" || char === '"') {
      quote = char;
      text += char;
      continue;
    }
    if (char === '$' && /[0-9]/.test(sql[i + 1] ?? '')) {
      let j = i + 1;
      while (j < sql.length && /[0-9]/.test(sql[j]!)) j++;
      order.push(Number(sql.slice(i + 1, j)) - 1);
      text += '?';
      i = j - 1;
      continue;
    }
    text += char;
  }
  const inOrder = order.every((index, position) => index === position);
  return { text, order: inOrder ? undefined : order };
}
