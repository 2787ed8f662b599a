/**
 * The two SQL dialects the stores and migrations speak. Everything else in this room is written once;
 * only the few spots that differ (auto-increment DDL, schema qualification, row locks, the SQLite
 * single-connection gate) ask which dialect they are on.
 */
import type { DataSource } from 'typeorm';

export type SqlDialect = 'sqlite' | 'postgres';

const SQLITE_DRIVERS = new Set(['better-sqlite3', 'sqlite', 'sqljs']);

export function dialectOf(dataSource: Pick<DataSource, 'options'>): SqlDialect {
  const type = dataSource.options.type;
  if (SQLITE_DRIVERS.has(type)) return 'sqlite';
  if (type === 'postgres') return 'postgres';
  throw new Error(`nest-agent-hooks persistence supports SQLite (better-sqlite3) and PostgreSQL, not '${type}'`);
}

/** The PostgreSQL schema the entities live in (`undefined`: the connection's search_path). */
export function schemaOf(dataSource: Pick<DataSource, 'options'>): string | undefined {
  if (dataSource.options.type !== 'postgres') return undefined;
  return dataSource.options.schema || undefined;
}

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** `"schema"."table"` on PostgreSQL with a schema, `"table"` otherwise. */
export function qualifiedTable(dataSource: Pick<DataSource, 'options'>, table: string): string {
  const schema = schemaOf(dataSource);
  return schema ? `${quoteIdentifier(schema)}.${quoteIdentifier(table)}` : quoteIdentifier(table);
}
