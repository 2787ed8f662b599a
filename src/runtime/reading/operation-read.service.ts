/**
 * Reads operations in the shapes of the HTTP API (DESIGN §7, §12), through the read port
 * (`OPERATION_READER`, implemented by persistence): the one place those shapes are built, for the
 * library's read API on `AgentRuntime` and the HTTP API's controllers alike. It decides nothing about who
 * may see what: the caller names an owner (the HTTP API its caller's), and this filters by it.
 */
import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { OPERATION_READER, type OperationReadPort, type OperationSummary } from '../operation-read.port.js';
import type { StoredOperation } from '../runtime-store.port.js';
import { RuntimeNotReadyError, UnknownOperationError } from '../runtime-errors.js';
import { isOperationId } from './operation-id.js';
import type { ListPageQuery } from './list-options.js';
import { encodeCursor } from './operation-cursor.js';
import {
  messageView,
  operationListItemView,
  operationView,
  timelineItemView,
  type MessageView,
  type OperationListView,
  type OperationView,
  type TimelineItemView,
} from './operation-views.js';

/** Operations read together at most (one `IN (…)` list). */
export const READ_BATCH = 100;

@Injectable()
export class OperationReadService implements OnApplicationBootstrap {
  /** Set once the application bootstrapped, as `OperationStart`'s (DESIGN §12: reads before `app.init()` throw). */
  private bootstrapped = false;

  constructor(@Inject(OPERATION_READER) private readonly reads: OperationReadPort) {}

  onApplicationBootstrap(): void {
    this.bootstrapped = true;
  }

  /** Throws `RuntimeNotReadyError` before the app bootstrapped, as `execAgent` does. */
  assertReady(): void {
    if (!this.bootstrapped) throw new RuntimeNotReadyError();
  }

  /** The stored operation, or null (the HTTP API checks its owner with it). */
  async find(operationId: string): Promise<StoredOperation | null> {
    return isOperationId(operationId) ? this.reads.operation(operationId) : null;
  }

  /** The stored operation, or `UnknownOperationError`. */
  async existing(operationId: string): Promise<StoredOperation> {
    const operation = await this.find(operationId);
    if (!operation) throw new UnknownOperationError(operationId);
    return operation;
  }

  /** The `GET /v1/operations/:id` view, or null when there is no such operation. */
  async get(operationId: string): Promise<OperationView | null> {
    const operation = await this.find(operationId);
    return operation ? this.view(operation) : null;
  }

  /** The `GET /v1/operations/:id` shape; pending items are read only while the operation is not over. */
  async view(operation: StoredOperation): Promise<OperationView> {
    if (operation.status === 'completed') return operationView(operation, []);
    return operationView(operation, await this.reads.pendingInterventions(operation.id));
  }

  /**
   * One page, newest first, filtered by `query.ownerId` when given (a cursor is only a place in the order).
   * One row more than the page is read, so `nextCursor` is given only when something follows.
   */
  async page(query: ListPageQuery): Promise<OperationListView> {
    const rows = await this.reads.listOperations({ ...query, limit: query.limit + 1 });
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return {
      items: page.map(operationListItemView),
      ...(rows.length > query.limit && last ? { nextCursor: encodeCursor({ createdAt: last.createdAt, id: last.id }) } : {}),
    };
  }

  /** The summaries of those of `ids` that exist, of every owner, in one read per READ_BATCH ids. */
  async summariesOf(ids: readonly string[]): Promise<OperationSummary[]> {
    const rows: OperationSummary[] = [];
    for (let start = 0; start < ids.length; start += READ_BATCH) {
      const batch = ids.slice(start, start + READ_BATCH);
      rows.push(...(await this.reads.listOperations({ ids: batch, limit: batch.length })));
    }
    return rows;
  }

  /** Published messages in `seq` order, only those after `afterSeq`, each with its `seq`. */
  async messagesAfter(operationId: string, afterSeq = 0): Promise<{ seq: number; message: MessageView }[]> {
    return (await this.reads.messages(operationId, afterSeq)).map((message) => ({ seq: message.seq, message: messageView(message) }));
  }

  /** The `GET …/messages` array. */
  async messages(operationId: string, afterSeq = 0): Promise<MessageView[]> {
    return (await this.reads.messages(operationId, afterSeq)).map(messageView);
  }

  /** The timeline; outcomes this process still buffers are written first, so a finished run shows whole. */
  async timeline(operationId: string): Promise<TimelineItemView[]> {
    return (await this.reads.timeline(operationId)).map(timelineItemView);
  }
}
