/**
 * Holds an operation's row for the rest of the caller's transaction, so writers of one operation take
 * turns (PostgreSQL `SELECT … FOR UPDATE`). On SQLite the store gate and SQLite's single writer already
 * serialize every transaction, and TypeORM refuses row locks there, so it is a plain read.
 */
import type { EntityManager } from 'typeorm';
import type { SqlDialect } from './dialect.js';
import { OperationEntity } from './entities/operation.entity.js';

export async function lockOperationRow(
  manager: EntityManager,
  dialect: SqlDialect,
  operationId: string,
): Promise<OperationEntity | null> {
  const query = manager
    .createQueryBuilder(OperationEntity, 'operation')
    .where('operation.id = :operationId', { operationId });
  if (dialect === 'postgres') query.setLock('pessimistic_write');
  return query.getOne();
}
