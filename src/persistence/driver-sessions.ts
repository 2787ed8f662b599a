/**
 * The one place that reaches into TypeORM's driver internals (checked with TypeORM 1.1): the better-sqlite3
 * handle under a SQLite DataSource (`driver.databaseConnection`), the node-postgres pool under a PostgreSQL
 * one (`driver.master`), and the `pg` module that DataSource loaded (`driver.postgres`, for the events
 * listener's own client). The stores' SQL runs on these through a `SqlSession`; TypeORM keeps the
 * entities, migrations and the less frequent paths. An upgrade that moves these fields fails the
 * persistence suites at the first statement.
 */
import type { DataSource } from 'typeorm';
import { BetterSqliteSession, type BetterSqliteHandle } from './better-sqlite3-session.js';
import { dialectOf } from './dialect.js';
import { PgSession, type PgPool } from './pg-session.js';
import type { SqlSession } from './sql-session.js';

/** A session on `dataSource`'s own connection(s); it must be initialized. */
export function openSqlSession(dataSource: DataSource): SqlSession {
  if (dialectOf(dataSource) === 'postgres') return new PgSession((dataSource.driver as unknown as { master: PgPool }).master);
  return new BetterSqliteSession((dataSource.driver as unknown as { databaseConnection: BetterSqliteHandle }).databaseConnection);
}

/** The `pg` module `dataSource`'s driver loaded (`pg`, or its native binding). */
export function pgModuleOf(dataSource: DataSource): { Client?: unknown } | undefined {
  return (dataSource.driver as unknown as { postgres?: { Client?: unknown } }).postgres;
}
