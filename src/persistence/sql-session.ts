/**
 * The one seam between the stores and a database driver: hand-written statements (`$1, $2, …`
 * placeholders on both drivers) and transactions around them. Two implementations, one per driver the
 * runtime supports: `BetterSqliteSession` (better-sqlite3) and `PgSession` (node-postgres); both are built
 * from a TypeORM DataSource by `driver-sessions.ts`, the one file that reaches TypeORM's driver internals.
 * Every store statement of the hot paths runs through a session, so a test can wrap it
 * (`SQL_SESSION_WRAPPER`) to count statements or fail one, and the statements it fails are the ones
 * production runs.
 */
import type { SqlDialect } from './dialect.js';

export interface SqlResult {
  /** The rows a statement returned (`RETURNING` rows included). */
  records: Record<string, unknown>[];
  /** Rows a write changed (a read: how many it returned). */
  affected: number;
}

/** A statement and its parameters (`$n` refers to `params[n - 1]`). */
export interface SqlStatement {
  sql: string;
  params: readonly unknown[];
}

export interface SqlExecutor {
  readonly dialect: SqlDialect;
  query(sql: string, params: readonly unknown[]): Promise<SqlResult>;
}

export interface SqlSession extends SqlExecutor {
  /**
   * `statements` as one unit, all or none; with `guarded`, the first is the guard (a conditional write
   * `RETURNING` a row): when it matches none, nothing else runs and nothing is written. Answers the first
   * statement's first row. A single statement is its own transaction; on better-sqlite3 nothing is awaited
   * between BEGIN and COMMIT, so no other caller of the handle's thread can interleave or wait on its lock.
   */
  batch(statements: readonly SqlStatement[], options?: { guarded?: boolean }): Promise<Record<string, unknown> | undefined>;
  /** `work` in one transaction: everything it runs through `tx` commits together, or nothing if it throws. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /**
   * `work` when it is this session's turn: better-sqlite3 is one connection shared by every caller (TypeORM's
   * own statements on the same DataSource included), so calls take turns in FIFO order there; on PostgreSQL
   * each transaction has its own pooled connection and `work` runs at once. `work` must not call the session
   * again (it would wait for itself).
   */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
}

/** Positional parameters `$1, $2, …` (the SQLite session rewrites them to `?`). */
export class SqlParams {
  readonly values: unknown[] = [];

  constructor(private readonly postgres: boolean) {}

  /** The placeholder of `value`; `cast` (PostgreSQL only) where the statement gives no type to infer. */
  bind(value: unknown, cast?: string): string {
    this.values.push(value);
    return cast && this.postgres ? `$${this.values.length}::${cast}` : `$${this.values.length}`;
  }
}

/** Wraps the session the stores use: identity in production; tests inject failures or count statements. */
export type SqlSessionWrapper = (session: SqlSession) => SqlSession;

export const SQL_SESSION_WRAPPER = Symbol('nest-agent-hooks:SqlSessionWrapper');
export const NO_SQL_SESSION_WRAPPER: SqlSessionWrapper = (session) => session;
