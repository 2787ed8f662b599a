/**
 * An entity's columns for hand-written SQL on the hot path (the step commit, leases): the quoted column list, a row's
 * values in that order as the driver stores them, and a raw result row (`RETURNING *`, a plain SELECT)
 * turned back into the entity — through the driver's own conversions (`simple-json`, SQLite booleans), so
 * plain SQL reads and writes exactly what TypeORM would, without its query builder and entity manager.
 */
import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';
import { qualifiedTable } from './dialect.js';
import type { SqlParams } from './sql-session.js';

export class EntityColumns<T extends ObjectLiteral> {
  private readonly columns: readonly ColumnMetadata[];
  private readonly tableName: string;
  /** `"a", "b", …` in column order. */
  readonly names: string;
  /** Each column's database name and type, in column order. */
  readonly typesAndNames: readonly { name: string; type: string }[];

  constructor(
    private readonly dataSource: DataSource,
    target: EntityTarget<T>,
  ) {
    const metadata = dataSource.getMetadata(target);
    this.columns = metadata.columns;
    this.tableName = metadata.tableName;
    this.names = this.columns.map((column) => `"${column.databaseName}"`).join(', ');
    this.typesAndNames = this.columns.map((column) => ({ name: column.databaseName, type: typeof column.type === 'string' ? column.type : 'text' }));
  }

  get count(): number {
    return this.columns.length;
  }

  /** `row`'s values in column order, as the driver persists them. */
  values(row: T): unknown[] {
    const driver = this.dataSource.driver;
    return this.columns.map((column) => driver.preparePersistentValue(row[column.propertyName as keyof T], column));
  }

  /** A raw row (database column names) as the entity. */
  hydrate(raw: Record<string, unknown>): T {
    const driver = this.dataSource.driver;
    const entity: Record<string, unknown> = {};
    for (const column of this.columns) entity[column.propertyName] = driver.prepareHydratedValue(raw[column.databaseName], column);
    return entity as T;
  }

  /** `INSERT INTO "table" (…) VALUES (…), …` of `rows`, bound to `params`. */
  insert(rows: readonly T[], params: SqlParams): string {
    return `INSERT INTO ${qualifiedTable(this.dataSource, this.tableName)} (${this.names}) VALUES ${this.tuples(rows, params)}`;
  }

  /** `UPDATE "table" SET … WHERE <where>`; `where` binds its own values to the same `params` after the assignments. */
  update(values: { [K in keyof T]?: T[K] | SqlExpression }, params: SqlParams, where: (params: SqlParams) => string): string {
    const set = this.assignments(values, params);
    return `UPDATE ${qualifiedTable(this.dataSource, this.tableName)} SET ${set} WHERE ${where(params)}`;
  }

  /** `(…), (…)`: the VALUES tuples of `rows` (every column, in column order), bound to `params`. */
  tuples(rows: readonly T[], params: SqlParams): string {
    return rows.map((row) => `(${this.values(row).map((value) => params.bind(value)).join(', ')})`).join(', ');
  }

  /**
   * `"a" = $1, "b" = $2, …`: an UPDATE's assignments of `values` (absent keys are left alone), each value as
   * the driver persists it; a `SqlExpression` is written as it is (`"version" + 1`).
   */
  assignments(values: { [K in keyof T]?: T[K] | SqlExpression }, params: SqlParams): string {
    const driver = this.dataSource.driver;
    const parts: string[] = [];
    for (const column of this.columns) {
      if (!(column.propertyName in values)) continue;
      const value = values[column.propertyName as keyof T];
      parts.push(`"${column.databaseName}" = ${value instanceof SqlExpression ? value.sql : params.bind(driver.preparePersistentValue(value, column))}`);
    }
    return parts.join(', ');
  }
}

/** A column's new value as SQL of its own (`"version" + 1`), never a bound parameter. */
export class SqlExpression {
  constructor(readonly sql: string) {}
}
