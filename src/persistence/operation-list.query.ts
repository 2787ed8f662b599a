/**
 * `GET /v1/operations` over `agent_hooks_operations`: one keyset page, newest first. The owner, the filters
 * and the row-value comparison `(created_at, id) < (:at, :id)` make one range of the
 * `agent_hooks_operations_owner_created_idx` index, read backwards: a page costs its own rows, however deep
 * the cursor (no OFFSET). Only the columns a summary shows are selected (never the run context).
 */
import type { OperationListQuery, OperationSummary } from '../runtime/operation-read.port.js';
import { OperationEntity } from './entities/operation.entity.js';
import type { StoreDatabase } from './store-database.js';

const SUMMARY_COLUMNS = ['id', 'agentId', 'ownerId', 'status', 'reason', 'stepIndex', 'inputTokens', 'outputTokens', 'costUsd', 'createdAt', 'updatedAt'] as const;

export function listOperations(database: StoreDatabase, query: OperationListQuery): Promise<OperationSummary[]> {
  return database.run(async (manager) => {
    const select = manager
      .createQueryBuilder(OperationEntity, 'operation')
      .select(SUMMARY_COLUMNS.map((column) => `operation.${column}`))
      .orderBy('operation.createdAt', 'DESC')
      .addOrderBy('operation.id', 'DESC')
      .limit(query.limit);
    if (query.ownerId !== undefined) select.andWhere('operation.ownerId = :ownerId', { ownerId: query.ownerId });
    if (query.status !== undefined) select.andWhere('operation.status = :status', { status: query.status });
    if (query.agentId !== undefined) select.andWhere('operation.agentId = :agentId', { agentId: query.agentId });
    if (query.ids !== undefined) {
      if (query.ids.length === 0) return [];
      select.andWhere('operation.id IN (:...ids)', { ids: [...query.ids] });
    }
    // Row values: both SQLite (≥ 3.15) and PostgreSQL compare them in the index's order.
    if (query.after !== undefined) {
      select.andWhere('(operation.createdAt, operation.id) < (:afterAt, :afterId)', { afterAt: query.after.createdAt, afterId: query.after.id });
    }
    return (await select.getMany()).map(toSummary);
  });
}

function toSummary(row: OperationEntity): OperationSummary {
  return {
    id: row.id,
    agentId: row.agentId,
    ...(row.ownerId !== null ? { ownerId: row.ownerId } : {}),
    status: row.status,
    ...(row.reason !== null ? { reason: row.reason } : {}),
    steps: row.stepIndex,
    usage: { inputTokens: row.inputTokens, outputTokens: row.outputTokens, costUsd: row.costUsd },
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
