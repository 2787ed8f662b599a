/**
 * A hand-written statement and its rows (`RETURNING` rows included) on either driver: on the transaction
 * of `manager` when it has one; otherwise, on PostgreSQL, straight on the DataSource's `pg` pool (one
 * statement needs no query runner: TypeORM's costs more CPU than the statement on the hot path),
 * and on SQLite through a query runner of its own (TypeORM shares its one connection). A statement outside
 * a transaction goes through `StoreDatabase.query` instead: on better-sqlite3 a prepared statement of its
 * own handle.
 * `driver.master` is TypeORM's internal pool field (checked with TypeORM 1.1): an upgrade must keep
 * `test/integration/persistence/step-state.spec.ts` green.
 */
import type { EntityManager } from 'typeorm';
import { asQueryFailed } from './sql-errors.js';

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
  const own = manager.queryRunner === undefined ? manager.connection.createQueryRunner() : undefined;
  const runner = manager.queryRunner ?? own!;
  try {
    const result = await runner.query(sql, [...params], true);
    return { records: result.records as Record<string, unknown>[] };
  } finally {
    if (own) await own.release();
  }
}
