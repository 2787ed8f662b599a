/**
 * TypeORM's `QueryDeepPartialEntity` recurses into JSON columns and rejects `unknown` inside them
 * (`Record<string, unknown>` metadata, tool args). These helpers check a row against the entity's own
 * property types instead — every column value is still type-checked — and only then hand it to TypeORM.
 */
import type { QueryDeepPartialEntity } from 'typeorm';

/** A full row for INSERT: every column. */
export function insertValues<T>(row: { [K in keyof T]: T[K] }): QueryDeepPartialEntity<T> {
  return row as QueryDeepPartialEntity<T>;
}

/** Some columns for UPDATE; a function is a raw SQL expression (`() => '"version" + 1'`). */
export function updateValues<T>(values: { [K in keyof T]?: T[K] | (() => string) }): QueryDeepPartialEntity<T> {
  return values as QueryDeepPartialEntity<T>;
}
