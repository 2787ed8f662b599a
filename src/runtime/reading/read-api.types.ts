/**
 * What the read API on `AgentRuntime` takes and gives (DESIGN §12, "Reading operations in a host app"). The
 * views are the HTTP API's own (DESIGN §7, `operation-views.ts`): one mapping serves both.
 */
import type { OperationStatus } from '../runtime-store.port.js';
import type { MessageView, OperationListItemView, OperationView } from './operation-views.js';

/** `runtime.list()`: the same filters and keyset paging as `GET /v1/operations`. */
export interface OperationListOptions {
  /** Only this owner's operations; without it every owner's (those with no owner included). */
  ownerId?: string;
  status?: OperationStatus;
  agentId?: string;
  /** 1 to 200; default 50. */
  limit?: number;
  /** The `nextCursor` of the previous page, as given. */
  cursor?: string;
}

/** `runtime.messages()`: only the messages published after this sequence number (a `message` event's `seq`). */
export interface OperationMessagesOptions {
  afterSeq?: number;
}

/** `runtime.changes()`: only this owner's operations; without it every owner's. */
export interface OperationChangesOptions {
  ownerId?: string;
}

/**
 * One event of `runtime.events(operationId)`, as `GET /v1/operations/:id/events` sends it:
 * - `status`: the operation's view (`GET /v1/operations/:id`) whenever its status, reason or pending tools change;
 * - `message`: a published message, with its sequence number (pass it back as `afterSeq` to resume after it);
 * - `delta`: a piece of the text a model is writing in step `stepIndex` (SPEC K5), live only: never replayed,
 *   and the step's `message` holds the whole text once it is committed.
 */
export type OperationEvent =
  | { type: 'status'; operation: OperationView }
  | { type: 'message'; seq: number; message: MessageView }
  | { type: 'delta'; stepIndex: number; text: string };

/**
 * One change of `runtime.changes()`, as `GET /v1/events` sends it:
 * - `operation`: the operation as the list shows it, after it was created or its status, step or usage changed;
 * - `resync`: changes may have been missed (the database's listening connection came back): read the list again.
 */
export type OperationChange = { type: 'operation'; operation: OperationListItemView } | { type: 'resync' };
