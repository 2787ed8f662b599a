/**
 * What the stores hand back and accept: plain data, no entity classes, `undefined` for absent fields
 * (never `null`), so callers can serialize a record straight into an API response (DESIGN §7).
 */
import type { AgentHookWebhook } from '../hooks/agent-hook.js';
import type { ToolResult } from '../hooks/agent-events.js';
import type { HookOutcome, TimelineSource } from '../hooks/hook-outcome.js';
import type { HookPoint } from '../hooks/hook-points.js';

// The runtime's store port defines these shapes; persistence implements the port.
export type { OperationStatus, StoredRunContext } from '../runtime/runtime-store.port.js';
import type { StoredOperation } from '../runtime/runtime-store.port.js';

/** The runtime's view of an operation, plus what only persistence needs (idempotency, lease, times). */
export interface OperationRecord extends StoredOperation {
  idempotencyKey?: string;
  leaseOwner?: string;
  leaseUntil?: string;
  createdAt: string;
  updatedAt: string;
  completedAt?: string;
}

/** A caller hook as persisted: the webhook part only, templates kept (W3, L2). */
export interface CallerHookRecord {
  position: number;
  hookId: string;
  type: string;
  matcher?: string;
  webhook: AgentHookWebhook;
}

export type NewCallerHook = Omit<CallerHookRecord, 'position'>;

export type MessageRole = 'user' | 'assistant' | 'tool';
export type ToolMessageError = 'hook_denied' | 'hook_control_error';

/** A tool call as an assistant message stores it (the shape of the runtime's `ModelToolCall`). */
export interface StoredToolCall {
  id: string;
  identifier: string;
  apiName: string;
  args: Record<string, unknown>;
  invalidArgs?: string;
}

export interface MessageRecord {
  id: string;
  operationId: string;
  seq: number;
  role: MessageRole;
  content: string;
  toolCalls?: StoredToolCall[];
  toolCallId?: string;
  identifier?: string;
  apiName?: string;
  error?: ToolMessageError;
  state?: Record<string, unknown>;
  /** A tool message's outcome, stored with it (absent on other roles and on rows written before it). */
  success?: boolean;
  createdAt: string;
}

/** A message to append; `id` is generated when absent, `seq` is always assigned by the store. */
export type NewMessage = Omit<MessageRecord, 'id' | 'operationId' | 'seq' | 'createdAt'> & { id?: string };

/** A published tool result (P1): the allowed or sanitized content with its verdict fields. */
export type NewToolMessage = NewMessage & { role: 'tool'; toolCallId: string };

export type InterventionKind = 'approval' | 'deferred';
export type InterventionStatus = 'pending' | 'approved' | 'rejected' | 'completed';
export type InterventionAction = 'approve' | 'reject' | 'rejectAndContinue';

export interface InterventionRecord {
  operationId: string;
  toolCallId: string;
  stepIndex: number;
  callIndex: number;
  identifier: string;
  apiName: string;
  args: Record<string, unknown>;
  kind: InterventionKind;
  status: InterventionStatus;
  claimedBy?: string;
  claimedAt?: string;
  decision?: InterventionAction;
  decisionReason?: string;
  decidedBy?: string;
  decidedAt?: string;
  /** Private: never put in hook events, logs or the timeline. */
  reply?: unknown;
  createdAt: string;
  updatedAt: string;
}

export type NewIntervention = Pick<
  InterventionRecord,
  'toolCallId' | 'stepIndex' | 'callIndex' | 'identifier' | 'apiName' | 'args' | 'kind'
>;

export type PlaceholderState = 'empty' | 'final';

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

/** A received deferred result handed to a reconciler to finish (its decider died during the after-chain). */
export interface ReceivedDeferredRecord {
  operationId: string;
  toolCallId: string;
  result: ToolResult;
  receivedAt: string;
}

/** One timeline row (DESIGN §7 `GET …/timeline`). */
export interface HookOutcomeRow {
  seq: number;
  operationId: string;
  at: string;
  point: HookPoint;
  hookId: string;
  source: TimelineSource;
  outcome: HookOutcome;
  errorCode?: string;
  latencyMs: number;
}

export type NewHookOutcome = Omit<HookOutcomeRow, 'seq'>;
