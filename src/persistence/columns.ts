/**
 * Column shapes shared by the entities. One entity set serves SQLite and PostgreSQL (DESIGN §5), so every
 * column uses a type both drivers store and return the same way:
 * - timestamps are ISO-8601 UTC strings from `Date#toISOString()` (fixed width, so text order is time order
 *   and `<` works the same on both; no driver time-zone conversion);
 * - JSON is `simple-json` (text on both; parsed by TypeORM), never `json`/`jsonb`, whose types differ;
 * - counters are `integer` (a JS number on both; `bigint` would come back as a string from `pg`);
 * - money and latencies are `double precision` (an IEEE double on both: SQLite REAL, PostgreSQL float8).
 */
import type { ColumnOptions, PrimaryColumnOptions } from 'typeorm';
import { MAX_IDENTIFIER_LENGTH } from '../hooks/input-limits.js';

/** `Date#toISOString()` is 24 characters; a little room for the 6-digit-year form. */
export const ISO_TIMESTAMP_LENGTH = 32;
/** Operation ids are UUID strings; message ids too. */
export const ID_LENGTH = 36;
/** Agent ids, owner ids, hook ids, tool identifiers and names: the one G6 limit, refused before storage. */
export const NAME_LENGTH = MAX_IDENTIFIER_LENGTH;

export const idColumn = (name: string, nullable = false): ColumnOptions => ({
  name,
  type: 'varchar',
  length: ID_LENGTH,
  nullable,
});

export const nameColumn = (name: string, nullable = false): ColumnOptions => ({
  name,
  type: 'varchar',
  length: NAME_LENGTH,
  nullable,
});

/** A closed set of short words ('running', 'hook_denied', …). */
export const wordColumn = (name: string, nullable = false): ColumnOptions => ({
  name,
  type: 'varchar',
  length: 32,
  nullable,
});

export const timestampColumn = (name: string, nullable = false): ColumnOptions => ({
  name,
  type: 'varchar',
  length: ISO_TIMESTAMP_LENGTH,
  nullable,
});

export const jsonColumn = (name: string, nullable = false): ColumnOptions => ({ name, type: 'simple-json', nullable });

export const integerColumn = (name: string): ColumnOptions => ({ name, type: 'integer' });

export const doubleColumn = (name: string): ColumnOptions => ({ name, type: 'double precision' });

/** A primary-key column; composite keys give every part the same constraint name. */
export const primaryColumn = (
  column: (name: string) => ColumnOptions,
  name: string,
  primaryKeyConstraintName: string,
): PrimaryColumnOptions => ({ ...column(name), nullable: false, primaryKeyConstraintName }) as PrimaryColumnOptions;
