/**
 * What the HTTP API reads of operations, through the runtime's read service (the one mapping of DESIGN §7
 * shapes, shared with the library's read API), and who may see it: another owner's operation is answered
 * exactly like one that does not exist (404), on every route.
 */
import { Injectable } from '@nestjs/common';
import { OperationReadService } from '../../runtime/reading/operation-read.service.js';
import type { MessageView, OperationListView, OperationView, TimelineItemView } from '../../runtime/reading/operation-views.js';
import type { StoredOperation } from '../../runtime/runtime-store.port.js';
import { notFound } from './api-error.js';
import type { Caller } from './caller.js';
import type { ListQuery } from './list-query.js';

/** Whether `caller` may see an operation of `ownerId`: its own only; the keyless loopback server's one local user sees all. */
export function visibleTo(caller: Caller, ownerId: string | undefined): boolean {
  return !caller.authenticated || ownerId === caller.ownerId;
}

/** The owner filter of `caller`'s reads: its own id, or none for the keyless loopback server's one local user. */
export function ownerFilterOf(caller: Caller): { ownerId?: string } {
  return caller.authenticated ? { ownerId: caller.ownerId } : {};
}

@Injectable()
export class OperationReader {
  constructor(private readonly reads: OperationReadService) {}

  /** The operation when `caller` may see it; otherwise a 404 that does not say whether it exists. */
  async owned(operationId: string, caller: Caller): Promise<StoredOperation> {
    const operation = await this.find(operationId);
    if (!operation || !visibleTo(caller, operation.ownerId)) throw notFound('no such operation');
    return operation;
  }

  /**
   * One page of the caller's operations, newest first. Always filtered by the caller's owner id (a cursor
   * is only a place in the order, never a way into another owner's rows).
   */
  list(caller: Caller, query: ListQuery): Promise<OperationListView> {
    return this.reads.page({ ...ownerFilterOf(caller), ...query });
  }

  find(operationId: string): Promise<StoredOperation | null> {
    return this.reads.find(operationId);
  }

  /** The `GET /v1/operations/:id` shape. */
  view(operation: StoredOperation): Promise<OperationView> {
    return this.reads.view(operation);
  }

  /** The `GET …/messages` array. */
  messages(operationId: string): Promise<MessageView[]> {
    return this.reads.messages(operationId);
  }

  /** The `GET …/timeline` array. */
  timeline(operationId: string): Promise<TimelineItemView[]> {
    return this.reads.timeline(operationId);
  }
}
