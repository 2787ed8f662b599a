/**
 * Reads what the HTTP API shows of an operation, through the read port (`OPERATION_READER`), and decides
 * who may see it: another owner's operation is answered exactly like one that does not exist (404), on every route.
 */
import { Inject, Injectable } from '@nestjs/common';
import { OPERATION_READER, type OperationReadPort, type OperationSummary } from '../../runtime/operation-read.port.js';
import type { StoredMessage, StoredOperation } from '../../runtime/runtime-store.port.js';
import { notFound } from './api-error.js';
import type { Caller } from './caller.js';
import type { ListQuery } from './list-query.js';
import { encodeCursor } from './operation-cursor.js';
import { operationListItemView, operationView, timelineItemView, type OperationListView, type OperationView, type TimelineItemView } from './operation-views.js';

/** Operations read together at most (one `IN (…)` list). */
export const READ_BATCH = 100;

/** Whether `caller` may see an operation of `ownerId`: its own only; the keyless loopback server's one local user sees all. */
export function visibleTo(caller: Caller, ownerId: string | undefined): boolean {
  return !caller.authenticated || ownerId === caller.ownerId;
}

@Injectable()
export class OperationReader {
  constructor(@Inject(OPERATION_READER) private readonly reads: OperationReadPort) {}

  /** The operation when `caller` may see it; otherwise a 404 that does not say whether it exists. */
  async owned(operationId: string, caller: Caller): Promise<StoredOperation> {
    const operation = await this.find(operationId);
    if (!operation || !visibleTo(caller, operation.ownerId)) throw notFound('no such operation');
    return operation;
  }

  /**
   * One page of the caller's operations, newest first. Always filtered by the caller's owner id (a cursor
   * is only a place in the order, never a way into another owner's rows). One row more than the page is
   * read, so `nextCursor` is given only when something follows.
   */
  async list(caller: Caller, query: ListQuery): Promise<OperationListView> {
    const rows = await this.reads.listOperations({
      ...(caller.authenticated ? { ownerId: caller.ownerId } : {}),
      ...(query.status !== undefined ? { status: query.status } : {}),
      ...(query.agentId !== undefined ? { agentId: query.agentId } : {}),
      ...(query.after !== undefined ? { after: query.after } : {}),
      limit: query.limit + 1,
    });
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return {
      items: page.map(operationListItemView),
      ...(rows.length > query.limit && last ? { nextCursor: encodeCursor({ createdAt: last.createdAt, id: last.id }) } : {}),
    };
  }

  /**
   * The summaries of those of `ids` that exist, of every owner, in one read per READ_BATCH ids: for the
   * caller-wide event stream, which shares one read among all its clients and sends each only what
   * `visibleTo` allows.
   */
  async summariesOf(ids: readonly string[]): Promise<OperationSummary[]> {
    const rows: OperationSummary[] = [];
    for (let start = 0; start < ids.length; start += READ_BATCH) {
      const batch = ids.slice(start, start + READ_BATCH);
      rows.push(...(await this.reads.listOperations({ ids: batch, limit: batch.length })));
    }
    return rows;
  }

  find(operationId: string): Promise<StoredOperation | null> {
    return this.reads.operation(operationId);
  }

  /** The `GET /v1/operations/:id` shape; pending items are read only while the operation is not over. */
  async view(operation: StoredOperation): Promise<OperationView> {
    if (operation.status === 'completed') return operationView(operation, []);
    return operationView(operation, await this.reads.pendingInterventions(operation.id));
  }

  /** Published messages in `seq` order, only those after `afterSeq` when given. */
  messages(operationId: string, afterSeq = 0): Promise<StoredMessage[]> {
    return this.reads.messages(operationId, afterSeq);
  }

  /** The timeline; outcomes this process still buffers are written first, so a finished run shows whole. */
  async timeline(operationId: string): Promise<TimelineItemView[]> {
    return (await this.reads.timeline(operationId)).map(timelineItemView);
  }
}
