/**
 * The SQL session on node-postgres: a statement straight on the pool (one statement needs no query runner,
 * and is its own transaction), a transaction on a client of its own taken from the pool for its duration.
 * The pool is the DataSource's (`driver-sessions.ts`), so a host's pool settings apply.
 */
import type { SqlExecutor, SqlResult, SqlSession, SqlStatement } from './sql-session.js';
import { asQueryFailed } from './sql-errors.js';

interface PgQueryResult {
  rows: Record<string, unknown>[];
  rowCount: number | null;
}

export interface PgQueryable {
  query(sql: string, params?: unknown[]): Promise<PgQueryResult>;
}

export interface PgPoolClient extends PgQueryable {
  release(error?: Error | boolean): void;
}

/** What the session uses of `pg.Pool` (pg is an optional peer dependency without bundled types). */
export interface PgPool extends PgQueryable {
  connect(): Promise<PgPoolClient>;
}

export class PgSession implements SqlSession {
  readonly dialect = 'postgres' as const;

  constructor(private readonly pool: PgPool) {}

  query(sql: string, params: readonly unknown[]): Promise<SqlResult> {
    return run(this.pool, sql, params);
  }

  async batch(statements: readonly SqlStatement[], options: { guarded?: boolean } = {}): Promise<Record<string, unknown> | undefined> {
    const [first, ...rest] = statements;
    if (!first) throw new TypeError('a batch needs a statement');
    if (rest.length === 0) return (await this.query(first.sql, first.params)).records[0];
    return this.transaction(async (tx) => {
      const [row] = (await tx.query(first.sql, first.params)).records;
      if (options.guarded && row === undefined) return undefined;
      for (const statement of rest) await tx.query(statement.sql, statement.params);
      return row;
    });
  }

  async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const tx: SqlExecutor = { dialect: 'postgres', query: (sql, params) => run(client, sql, params) };
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const value = await work(tx);
      await client.query('COMMIT');
      return value;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
      } catch (rollback) {
        broken = rollback as Error; // the connection is not reusable: the pool drops it
      }
      throw error;
    } finally {
      client.release(broken);
    }
  }

  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return work();
  }
}

async function run(target: PgQueryable, sql: string, params: readonly unknown[]): Promise<SqlResult> {
  try {
    const result = await target.query(sql, [...params]);
    return { records: result.rows, affected: result.rowCount ?? result.rows.length };
  } catch (error) {
    throw asQueryFailed(sql, error);
  }
}
