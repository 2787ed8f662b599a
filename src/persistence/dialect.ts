/**
 * The two SQL dialects the stores and migrations speak, one per supported driver: better-sqlite3 and
 * node-postgres (`postgres`). Everything else in this room is written once; the statements that differ
 * are built in one place each (`*.sql.ts`), and the driver differences live in the SQL sessions.
 */
import type { DataSource } from 'typeorm';
import { DatabaseConfigError } from './persistence-errors.js';

export type SqlDialect = 'sqlite' | 'postgres';

/** The TypeORM driver types the runtime runs on. */
export const SUPPORTED_DRIVERS = ['better-sqlite3', 'postgres'] as const;

export function dialectOf(dataSource: Pick<DataSource, 'options'>): SqlDialect {
  const type = dataSource.options.type;
  if (type === 'better-sqlite3') return 'sqlite';
  if (type === 'postgres') return 'postgres';
  throw new DatabaseConfigError(`the database driver '${String(type)}' is not supported: use ${SUPPORTED_DRIVERS.map((driver) => `'${driver}'`).join(' or ')}`);
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
