/**
 * The better-sqlite3 handle under a SQLite DataSource, for the hot paths — the step commit, the hook
 * timeline's batches, an operation's creation, reads and terminal transition: its own
 * synchronous transaction and prepared statements cost a fraction of TypeORM's transaction machinery.
 * Used only inside the store gate (`StoreDatabase.run`), like every other statement of the stores.
 * Reached through TypeORM's internal `driver.databaseConnection` (TypeORM 1.1, better-sqlite3 12): an
 * upgrade must keep the persistence suites green.
 */
import type { DataSource } from 'typeorm';

export interface NativeStatement {
  /** Whether it returns rows (a SELECT, a `RETURNING` clause). */
  readonly reader: boolean;
  get(params: readonly unknown[]): Record<string, unknown> | undefined;
  all(params: readonly unknown[]): Record<string, unknown>[];
  run(params: readonly unknown[]): { changes: number };
}

export interface NativeSqlite {
  prepare(sql: string): NativeStatement;
  /** better-sqlite3's: BEGIN … COMMIT around `fn` (a SAVEPOINT inside an open transaction), ROLLBACK if it throws. */
  transaction<A extends unknown[], T>(fn: (...args: A) => T): (...args: A) => T;
}

/** Prepared statements kept per SQL text (a step commit has a handful of shapes, a timeline batch one per size). */
const STATEMENTS_KEPT = 64;

export class NativeSqliteStatements {
  private readonly statements = new Map<string, NativeStatement>();
  private wrapped: ((work: () => unknown) => unknown) | undefined;

  constructor(private readonly dataSource: DataSource) {}

  get db(): NativeSqlite {
    return (this.dataSource.driver as unknown as { databaseConnection: NativeSqlite }).databaseConnection;
  }

  /**
   * `work` in better-sqlite3's transaction (BEGIN … COMMIT, ROLLBACK if it throws): one wrapper kept, where
   * `db.transaction(fn)()` builds one per call, on every commit of the hot path.
   */
  inTransaction<T>(work: () => T): T {
    this.wrapped ??= this.db.transaction((next: () => unknown) => next());
    return this.wrapped(work) as T;
  }

  prepared(sql: string): NativeStatement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      if (this.statements.size >= STATEMENTS_KEPT) this.statements.delete(this.statements.keys().next().value!);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}

/**
 * One statement on the native handle, as TypeORM's better-sqlite3 query runner runs it (booleans bound as
 * 0/1, rows for a statement that returns some): its rows, or how many it changed.
 */
export function runStatement(statements: NativeSqliteStatements, sql: string, params: readonly unknown[]): { records: Record<string, unknown>[]; affected: number } {
  const statement = statements.prepared(sql);
  const bound = params.map((param) => (typeof param === 'boolean' ? (param ? 1 : 0) : param));
  if (statement.reader) {
    const records = statement.all(bound);
    return { records, affected: records.length };
  }
  return { records: [], affected: statement.run(bound).changes };
}
