/**
 * The server's `OperationReadPort` over the stores of the runtime's database (`RuntimeDatabase.stores()`).
 * The stores' records extend the port's shapes, so they are handed back as they are.
 */
import { Injectable, Logger } from '@nestjs/common';
import { errorType } from '../hooks/hook-errors.js';
import type { OperationCount, OperationListQuery, OperationReadPort, OperationSummary, TimelineRow } from '../runtime/operation-read.port.js';
import type { StoredIntervention, StoredMessage, StoredOperation } from '../runtime/runtime-store.port.js';
import { OperationEntity } from './entities/operation.entity.js';
import { listOperations } from './operation-list.query.js';
import { RuntimeDatabase } from './runtime-database.js';

interface StatusCountRow {
  status: OperationCount['status'];
  reason: NonNullable<OperationCount['reason']> | null;
  limit: string | null;
  count: number | string;
}

/** F4/F5: the limit that ended an operation is its error type when the reason is a tool or token limit. */
const LIMIT_OF = `CASE WHEN operation.reason IN ('token_limit', 'tool_limit') THEN operation.error_type END`;

@Injectable()
export class SqlOperationReads implements OperationReadPort {
  private readonly logger = new Logger('OperationReader');

  constructor(private readonly database: RuntimeDatabase) {}

  async operation(operationId: string): Promise<StoredOperation | null> {
    return (await this.database.stores()).operations.get(operationId);
  }

  async pendingInterventions(operationId: string): Promise<StoredIntervention[]> {
    return (await this.database.stores()).interventions.listPending(operationId);
  }

  async listOperations(query: OperationListQuery): Promise<OperationSummary[]> {
    return listOperations((await this.database.stores()).database, query);
  }

  async messages(operationId: string, afterSeq = 0): Promise<StoredMessage[]> {
    const messages = await (await this.database.stores()).messages.list(operationId);
    return afterSeq > 0 ? messages.filter((message) => message.seq > afterSeq) : messages;
  }

  async timeline(operationId: string): Promise<TimelineRow[]> {
    const stores = await this.database.stores();
    await stores.timeline.flush().catch((error: unknown) => this.logger.warn(`could not flush the hook timeline (${errorType(error)})`));
    return stores.outcomes.listByOperation(operationId);
  }

  /** One GROUP BY over the (status, completed_at) index; never opens the database. */
  async operationCounts(): Promise<OperationCount[] | undefined> {
    const stores = this.database.current;
    if (!stores) return undefined;
    const rows = await stores.database.run((manager) =>
      manager
        .createQueryBuilder(OperationEntity, 'operation')
        .select('operation.status', 'status')
        .addSelect('operation.reason', 'reason')
        .addSelect(LIMIT_OF, 'limit')
        .addSelect('COUNT(*)', 'count')
        .groupBy('operation.status')
        .addGroupBy('operation.reason')
        .addGroupBy(LIMIT_OF)
        .getRawMany<StatusCountRow>(),
    );
    return rows.map(({ status, reason, limit, count }) => ({ status, ...(reason !== null ? { reason } : {}), ...(limit !== null ? { limit } : {}), count: Number(count) }));
  }
}
