/**
 * Reads what the HTTP API shows of an operation, through the public stores, and decides who may see it:
 * another owner's operation is answered exactly like one that does not exist (404), on every route.
 */
import { Injectable, Logger } from '@nestjs/common';
import { errorType } from '../../hooks/hook-errors.js';
import type { MessageRecord, OperationRecord } from '../../persistence/records.js';
import { RuntimeDatabase } from '../../persistence/runtime-database.js';
import { notFound } from './api-error.js';
import type { Caller } from './caller.js';
import { operationView, timelineItemView, type OperationView, type TimelineItemView } from './operation-views.js';

@Injectable()
export class OperationReader {
  private readonly logger = new Logger('OperationReader');
  constructor(private readonly database: RuntimeDatabase) {}

  /** The operation when `caller` may see it; otherwise a 404 that does not say whether it exists. */
  async owned(operationId: string, caller: Caller): Promise<OperationRecord> {
    const operation = await this.find(operationId);
    if (!operation || (caller.authenticated && operation.ownerId !== caller.ownerId)) throw notFound('no such operation');
    return operation;
  }

  async find(operationId: string): Promise<OperationRecord | null> {
    return (await this.database.stores()).operations.get(operationId);
  }

  /** The `GET /v1/operations/:id` shape; pending items are read only while the operation is not over. */
  async view(operation: OperationRecord): Promise<OperationView> {
    if (operation.status === 'completed') return operationView(operation, []);
    const pending = await (await this.database.stores()).interventions.listPending(operation.id);
    return operationView(operation, pending);
  }

  /** Published messages in `seq` order, only those after `afterSeq` when given. */
  async messages(operationId: string, afterSeq = 0): Promise<MessageRecord[]> {
    const messages = await (await this.database.stores()).messages.list(operationId);
    return afterSeq > 0 ? messages.filter((message) => message.seq > afterSeq) : messages;
  }

  /** The timeline; outcomes this process still buffers are written first, so a finished run shows whole. */
  async timeline(operationId: string): Promise<TimelineItemView[]> {
    const stores = await this.database.stores();
    await stores.timeline.flush().catch((error: unknown) => this.logger.warn(`could not flush the hook timeline (${errorType(error)})`));
    return (await stores.outcomes.listByOperation(operationId)).map(timelineItemView);
  }
}
