/**
 * State changes of operations as events (DESIGN §4, "events, not polling"). The stores publish one event
 * per committed change — in this process at once, in other processes on the same PostgreSQL through
 * `LISTEN/NOTIFY` — and whatever waits on an operation (`done`, an SSE stream, a worker watching for a
 * cancel, a waiting operation) subscribes instead of re-reading the database. An event says *that* the
 * operation changed and how (status, version); the subscriber reads what it needs. Events carry no content.
 */
import type { Observable } from 'rxjs';
import type { OperationStatus } from './runtime-store.port.js';

export type OperationEventKind =
  /** A new operation row. */
  | 'created'
  /** Its status changed (running ↔ waiting, completed) or its state moved (version bump). */
  | 'status'
  /** A message was published. */
  | 'message'
  /** Interventions were recorded, decided or completed (pending tools changed). */
  | 'intervention'
  /** Owed work was recorded for it (a notification, a terminal sequence). */
  | 'owed';

export interface OperationEvent {
  operationId: string;
  kind: OperationEventKind;
  /** The status after the change, when the writer knows it. */
  status?: OperationStatus;
  /** The version after the change, when the writer knows it. */
  version?: number;
}

/**
 * `resync`: events may have been missed (the listening connection dropped and came back): every subscriber
 * re-reads what it watches once.
 */
export type OperationEventSignal = OperationEvent | { kind: 'resync' };

export interface OperationEvents {
  /** Every event, from this process and (on PostgreSQL) from the others; hot, never completes before shutdown. */
  readonly events$: Observable<OperationEventSignal>;
  /** The events of one operation, and every `resync`. */
  of(operationId: string): Observable<OperationEventSignal>;
}

export const OPERATION_EVENTS = Symbol('nest-agent-hooks:OperationEvents');
