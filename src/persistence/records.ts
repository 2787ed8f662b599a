/**
 * What the stores hand back and accept: plain data, no entity classes, `undefined` for absent fields
 * (never `null`), so callers can serialize a record straight into an API response (DESIGN §7).
 *
 * One vocabulary: the runtime's ports (`runtime-store.port.ts`, `operation-read.port.ts`) define the shapes
 * the runtime speaks; a record here is that shape plus what only persistence keeps (the operation id on a
 * child row, times, claims), so a port implementation hands records back as they are, without re-mapping.
 */
import type { ToolResult } from '../hooks/agent-events.js';
import type { ModelToolCall } from '../runtime/models/chat-model.js';
import type { TimelineRow } from '../runtime/operation-read.port.js';
import type {
  PlaceholderState,
  StoredCallerHook,
  StoredIntervention,
  StoredMessage,
  StoredOperation,
} from '../runtime/runtime-store.port.js';

export type {
  InterventionAction,
  InterventionKind,
  InterventionStatus,
  MessageRole,
  NewMessage,
  OperationStatus,
  PlaceholderState,
  StoredRunContext,
  ToolMessageError,
} from '../runtime/runtime-store.port.js';
// The store-side names of two port shapes: a published tool result (P1), an intervention to record.
export type { ToolMessage as NewToolMessage, NewStoredIntervention as NewIntervention } from '../runtime/runtime-store.port.js';

/** The runtime's view of an operation, plus what only persistence needs (idempotency, lease, times). */
export interface OperationRecord extends StoredOperation {
  idempotencyKey?: string;
  leaseUntil?: string;
  createdAt: string;
  updatedAt: string;
  completedAt?: string;
}

/** A caller hook as persisted (the runtime's shape as it is). */
export type CallerHookRecord = StoredCallerHook;

export type NewCallerHook = Omit<CallerHookRecord, 'position'>;

/** A tool call as an assistant message stores it (the runtime's `ModelToolCall`). */
export type StoredToolCall = ModelToolCall;

export interface MessageRecord extends StoredMessage {
  operationId: string;
  createdAt: string;
}

export interface InterventionRecord extends StoredIntervention {
  operationId: string;
  claimedAt?: string;
  decidedBy?: string;
  decidedAt?: string;
  /** Private: never put in hook events, logs or the timeline. */
  reply?: unknown;
  createdAt: string;
  updatedAt: string;
}

export interface PlaceholderRecord {
  operationId: string;
  toolCallId: string;
  state: PlaceholderState;
  result?: ToolResult;
  createdAt: string;
  finalizedAt?: string;
  /** A result received and not published yet (SPEC G3): its after-chain runs, or its decider died during it. */
  received?: ToolResult;
  receivedAt?: string;
}

/** One timeline row (DESIGN §7 `GET …/timeline`): the read port's `TimelineRow` as it is. */
export type HookOutcomeRow = TimelineRow;

export type NewHookOutcome = Omit<HookOutcomeRow, 'seq'>;
