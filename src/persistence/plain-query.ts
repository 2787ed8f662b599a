/**
 * A hand-written statement and its rows (`RETURNING` rows included) on either driver: on the transaction
 * of `manager` when it has one; otherwise, on PostgreSQL, straight on the DataSource's `pg` pool (one
 * statement needs no query runner: TypeORM's costs more CPU than the statement on the hot path, issue 14),
 * and on SQLite as a prepared statement of better-sqlite3's own handle (`native-sqlite.ts`; the caller is
 * in the store gate, like every store statement).
 * `driver.master` is TypeORM's internal pool field (checked with TypeORM 1.1): an upgrade must keep
 * `test/integration/persistence/step-state.spec.ts` green.
 */
import type { DataSource, EntityManager } from 'typeorm';
import { NativeSqliteStatements, runNative } from './native-sqlite.js';
import { asQueryFailed } from './sql-errors.js';

/**
 * The prepared statements of each SQLite DataSource that `plainQuery` ran on: a cache that goes with its
 * DataSource (statements only, no coordination: the gate is the `StoreDatabase`'s).
 */
const statementsOf = new WeakMap<DataSource, NativeSqliteStatements>();

export interface PlainResult {
  records: Record<string, unknown>[];
}

interface PgPool {
  query(sql: string, params: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

export async function plainQuery(manager: EntityManager, sql: string, params: readonly unknown[]): Promise<PlainResult> {
  if (manager.queryRunner === undefined && manager.connection.options.type === 'postgres') {
    const pool = (manager.connection.driver as unknown as { master: PgPool }).master;
    try {
      return { records: (await pool.query(sql, [...params])).rows };
    } catch (error) {
      throw asQueryFailed(sql, error);
    }
  }
  if (manager.queryRunner === undefined && manager.connection.options.type === 'better-sqlite3') {
    let statements = statementsOf.get(manager.connection);
    if (!statements) statementsOf.set(manager.connection, (statements = new NativeSqliteStatements(manager.connection)));
    try {
      return { records: runNative(statements, sql, params).records };
    } catch (error) {
      throw asQueryFailed(sql, error);
    }
  }
  const own = manager.queryRunner === undefined ? manager.connection.createQueryRunner() : undefined;
  const runner = manager.queryRunner ?? own!;
  try {
    const result = await runner.query(sql, [...params], true);
    return { records: result.records as Record<string, unknown>[] };
  } finally {
    if (own) await own.release();
  }
}
