/**
 * Holds an operation's row for the rest of the caller's session transaction, so writers of one operation
 * take turns: PostgreSQL `SELECT … FOR UPDATE`. On SQLite the session's gate and SQLite's single writer
 * already serialize every transaction (and SQLite has no row locks), so it is a plain read.
 */
import { OperationEntity } from './entities/operation.entity.js';
import type { SqlExecutor } from './sql-session.js';
import type { StoreDatabase } from './store-database.js';

export async function lockOperationRow(db: StoreDatabase, tx: SqlExecutor, operationId: string): Promise<OperationEntity | null> {
  const columns = db.columns(OperationEntity);
  const lock = tx.dialect === 'postgres' ? ' FOR UPDATE' : '';
  const { records } = await tx.query(`SELECT ${columns.names} FROM ${db.table('agent_hooks_operations')} WHERE "id" = $1${lock}`, [operationId]);
  return records[0] ? columns.hydrate(records[0]) : null;
}
