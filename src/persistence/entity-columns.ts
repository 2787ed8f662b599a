/**
 * An entity's columns for hand-written SQL on the hot path (the step commit, leases): the quoted column list, a row's
 * values in that order as the driver stores them, and a raw result row (`RETURNING *`, a plain SELECT)
 * turned back into the entity — through the driver's own conversions (`simple-json`, SQLite booleans), so
 * plain SQL reads and writes exactly what TypeORM would, without its query builder and entity manager.
 */
import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';

export class EntityColumns<T extends ObjectLiteral> {
  private readonly columns: readonly ColumnMetadata[];
  /** `"a", "b", …` in column order. */
  readonly names: string;
  /** Each column's database name and type, in column order. */
  readonly typesAndNames: readonly { name: string; type: string }[];

  constructor(
    private readonly dataSource: DataSource,
    target: EntityTarget<T>,
  ) {
    this.columns = dataSource.getMetadata(target).columns;
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
}
