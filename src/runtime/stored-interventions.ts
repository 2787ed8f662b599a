/**
 * Tool calls that wait (for a human decision or an outside executor) as the runtime and its store speak of
 * them (`RuntimeStore`, runtime-store.port.ts): the interventions, the decisions and deferred results that
 * resolve them, and the notifications owed about them (SPEC G3).
 */
import type { ToolResult } from '../hooks/agent-events.js';
import type { StoredMessage, ToolMessage } from './stored-operation.js';

export type InterventionKind = 'approval' | 'deferred';
export type InterventionStatus = 'pending' | 'approved' | 'rejected' | 'completed';
export type InterventionAction = 'approve' | 'reject' | 'rejectAndContinue';

/** A tool call waiting for a human decision (`approval`) or an outside executor (`deferred`). */
export interface StoredIntervention {
  toolCallId: string;
  stepIndex: number;
  callIndex: number;
  identifier: string;
  apiName: string;
  args: Record<string, unknown>;
  kind: InterventionKind;
  status: InterventionStatus;
  decision?: InterventionAction;
  decisionReason?: string;
  claimedBy?: string;
  /** F6: the arguments an approval replaced the model's with; the call runs with them. */
  editedArgs?: Record<string, unknown>;
}

/** A human decision on a pending approval. */
export interface InterventionDecision {
  action: InterventionAction;
  reason?: string;
  /** Who decided (an owner or user id), for the audit trail. */
  decidedBy?: string;
  /** F6 (`approve` only): the arguments the call runs with instead of the model's, checked against its schema. */
  args?: Record<string, unknown>;
}

/** What a human decision met: stored, an item no longer pending, or an operation already completed (G5). */
export type DecisionOutcome = 'decided' | 'not_pending' | 'operation_completed';

export type DeferredPublishOutcome = 'published' | 'already_completed' | 'operation_completed';

/** A deferred call's placeholder: `empty` until its result is published, then `final`. */
export type PlaceholderState = 'empty' | 'final';

export type NewStoredIntervention = Pick<StoredIntervention, 'toolCallId' | 'stepIndex' | 'callIndex' | 'identifier' | 'apiName' | 'args' | 'kind'>;

/** The hooks that observe a decision: delivered after the decision committed, at least once (SPEC G3). */
export type OwedNotificationPoint = 'afterHumanIntervention' | 'onStopByHumanIntervention';

/**
 * A notification owed about a committed decision. Identifiers only: the event is rebuilt from the
 * intervention at delivery, so every attempt has the same stable webhook-id (DESIGN §5: no payload stored).
 */
export interface OwedNotification {
  id: string;
  operationId: string;
  point: OwedNotificationPoint;
  toolCallId: string;
  /** The decision it is about. */
  action?: InterventionAction;
  /** How many times it was claimed for delivery, this claim included (the decider's own is the first). */
  attempts: number;
}

/** What commits with a decision besides the decision itself (`decideDurably`). */
export interface DecisionEffects {
  /** One owed row per point, inserted already claimed by `claimant` for `holdMs` (a reconciler waits that long). */
  notify: readonly OwedNotificationPoint[];
  claimant: string;
  holdMs: number;
  /** `reject` (stop) only: the rejection receipt (`rejectionReceipt`), published with the terminal transition. */
  receipt?: ToolMessage;
  /** `reject`: who holds the terminal sequence and how long; default `TERMINAL_HOOKS_OWNER` for `holdMs`. */
  terminalHold?: { owner: string; ms: number };
}

/** What a durable decision committed. Nothing at all unless `outcome` is `decided`. */
export interface DurableDecision {
  outcome: DecisionOutcome;
  /** `approve` / `rejectAndContinue` of the last pending item of a waiting operation: waiting → running, committed. */
  resumed: boolean;
  /** `reject`: the receipt and the terminal transition (reason `interrupted`) committed; the terminal sequence is owed. */
  completed: boolean;
  /** The owed notifications, claimed by the decider: deliver each, then `markNotificationDelivered`. */
  owed: OwedNotification[];
  /** `reject`: the published receipt. */
  receipt?: StoredMessage;
}

/** A received deferred result a reconciler finishes: the after-chain with `result`, then the publish. */
export interface ReceivedDeferredResult {
  operationId: string;
  toolCallId: string;
  result: ToolResult;
  /** When it was received: a finishing that keeps failing waits longer the older it is. */
  receivedAt: string;
}

/** What a durable deferred publish committed. */
export interface DurableDeferredPublish {
  outcome: DeferredPublishOutcome;
  /** The result was the last pending item of a waiting operation: waiting → running, in the same transaction. */
  resumed: boolean;
  message?: StoredMessage;
}
