/**
 * How every store reaches the database. On PostgreSQL each transaction gets its own pooled connection, so
 * this only forwards. SQLite (better-sqlite3) is one synchronous connection that TypeORM shares between
 * all callers: a second `transaction()` started while one is open becomes a SAVEPOINT inside it, and a
 * plain statement issued meanwhile joins it — one caller's rollback would undo another's committed work.
 * So on SQLite every store call takes its turn through one FIFO gate per DataSource (shared by all the
 * stores built on it). better-sqlite3 runs statements synchronously anyway, so the gate costs no
 * parallelism. Work passed in must use the given `EntityManager` only, never another store (re-entering
 * the gate would wait for itself).
 */
import type { DataSource, EntityManager } from 'typeorm';
import { dialectOf, qualifiedTable, type SqlDialect } from './dialect.js';

const databases = new WeakMap<DataSource, StoreDatabase>();

export class StoreDatabase {
  readonly dialect: SqlDialect;
  /** The end of the SQLite queue; each call chains onto it. */
  private tail: Promise<unknown> = Promise.resolve();

  private constructor(readonly dataSource: DataSource) {
    this.dialect = dialectOf(dataSource);
  }

  /** The one instance for `dataSource`, so every store built on it shares the SQLite gate. */
  static for(dataSource: DataSource): StoreDatabase {
    let database = databases.get(dataSource);
    if (!database) {
      database = new StoreDatabase(dataSource);
      databases.set(dataSource, database);
    }
    return database;
  }

  /** Runs `work` in one transaction: everything it writes commits together or not at all. */
  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.exclusive(() => this.dataSource.transaction(work));
  }

  /** Runs `work` outside a transaction: single statements (each atomic on its own) and reads. */
  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.exclusive(() => work(this.dataSource.manager));
  }

  /** `"schema"."table"` for hand-written SQL. */
  table(name: string): string {
    return qualifiedTable(this.dataSource, name);
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    if (this.dialect === 'postgres') return work();
    const turn = this.tail.then(work);
    // The queue goes on whether this call succeeds or fails; its caller sees its own result.
    this.tail = turn.catch(() => undefined);
    return turn;
  }
}
