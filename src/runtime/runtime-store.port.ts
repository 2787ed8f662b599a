/**
 * What the runtime needs from persistence (the `persistence/` room implements it). Every step reads the
 * operation from here and commits its effects here, so any process can run the next step (DESIGN §4).
 */
import type { AgentHookWebhook } from '../hooks/agent-hook.js';
import type { TerminalReason, ToolResult, UsageTotals } from '../hooks/agent-events.js';
import type { ModelToolCall } from './models/chat-model.js';
import type { ClientToolDeclaration } from './tools/client-tools.js';

export type OperationStatus = 'running' | 'waiting' | 'completed';

/** The run context as stored: never a secret (DESIGN §5). */
export interface StoredRunContext {
  userId?: string;
  organizationId?: string;
  scopes?: string[];
  metadata?: Record<string, unknown>;
}

/** The latest compaction: the summary stands in for every message up to `throughSeq`. */
export interface StoredCompaction {
  groupId: string;
  summary: string;
  throughSeq: number;
}

export interface StoredOperation {
  id: string;
  parentOperationId?: string;
  /** A sub-agent's thread (V1). */
  threadId?: string;
  /** The parent's `agents/call` tool call this operation answers (P5). */
  parentToolCallId?: string;
  compaction?: StoredCompaction;
  agentId: string;
  ownerId?: string;
  status: OperationStatus;
  reason?: TerminalReason;
  stepIndex: number;
  runContext: StoredRunContext;
  usage: UsageTotals;
  errorType?: string;
  errorMessage?: string;
  /** A safe summary of the error (DESIGN §7): our own fields only (model id, HTTP status, a variable's name). */
  errorSummary?: string;
  /** Queue mode: the worker running the current step, while its lease lasts. */
  leaseOwner?: string;
  /** The digest of the request that created it under an idempotency key (G8), when one was given. */
  idempotencyDigest?: string;
  /** The client tools its caller declared (`execAgent({ clientTools })`), validated before they were stored. */
  clientTools?: ClientToolDeclaration[];
  /** SPEC O3: the W3C trace context of its `invoke_agent` span, when a tracer recorded one. */
  traceContext?: StoredTraceContext;
  version: number;
}

/**
 * What the terminal transition records of why the operation ended: an error's type and safe summary (S3),
 * or a reached limit (run-limits.ts: its JSON in `message`, our own fields only).
 */
export interface TerminalFailure {
  type?: string;
  summary?: string;
  message?: string;
}

/** What a step's commit may change on the operation; the terminal transition is `complete`, never a patch. */
export interface StepPatch {
  stepIndex?: number;
  /** Totals so far (not increments): the version check makes a read-modify-write safe. */
  usage?: UsageTotals;
  status?: Exclude<OperationStatus, 'completed'>;
  runContext?: StoredRunContext;
  /** The latest compaction of the conversation (replaces an earlier one). */
  compaction?: StoredCompaction;
  /**
   * The commit also lets its `leaseOwner`'s lease go, in the same statement (queue mode: a step's last
   * commit when its next step is another job). Only with a `leaseOwner`.
   */
  releaseLease?: boolean;
}

export interface CommitOptions {
  /**
   * The hook timeline recorded so far is durable no later than this commit — in the commit's own transaction
   * where the store can (SQLite), else flushed before it — so a process killed right after the commit leaves
   * no published result without the timeline of the hooks that decided it.
   */
  timelineFirst?: boolean;
}

/** A caller hook as persisted: the webhook part only, templates kept (W3, L2). */
export interface StoredCallerHook {
  position: number;
  hookId: string;
  type: string;
  matcher?: string;
  webhook: AgentHookWebhook;
}

export type MessageRole = 'user' | 'assistant' | 'tool';
export type ToolMessageError = 'hook_denied' | 'hook_control_error';

export interface StoredMessage {
  id: string;
  seq: number;
  role: MessageRole;
  content: string;
  toolCalls?: ModelToolCall[];
  toolCallId?: string;
  identifier?: string;
  apiName?: string;
  error?: ToolMessageError;
  state?: Record<string, unknown>;
  /** A tool message's outcome (`afterStep` `toolResults[].success`); absent on rows written before it. */
  success?: boolean;
}

/** A message to append; `seq` is always assigned by the store, `id` generated when absent. */
export type NewMessage = Omit<StoredMessage, 'id' | 'seq'> & { id?: string };

export interface NewOperation {
  id: string;
  agentId: string;
  ownerId?: string;
  parentOperationId?: string;
  threadId?: string;
  parentToolCallId?: string;
  prompt: string;
  runContext: StoredRunContext;
  callerHooks: StoredCallerHook[];
  idempotencyKey?: string;
  /** With `idempotencyKey`: a digest of the request, stored so a retry with another request is refused (G8). */
  idempotencyDigest?: string;
  clientTools?: ClientToolDeclaration[];
  traceContext?: StoredTraceContext;
  /**
   * Local mode: the creating process drives the operation at once, so it is created with the process's
   * lease already held (`owner` until now + `ttlMs`), the same row and statement, instead of a second
   * statement taking it right after: one statement less on the path of every local run.
   */
  lease?: NewOperationLease;
}

/** The lease a new operation is created with (`NewOperation.lease`). */
export interface NewOperationLease {
  owner: string;
  ttlMs: number;
}

/** W3C trace context, as stored with an operation (SPEC O3): no baggage, nothing secret. */
export interface StoredTraceContext {
  traceparent: string;
  tracestate?: string;
}

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

/** Who runs the terminal sequence after the transition, and for how long before a reconciler may take it over. */
export interface TerminalHold {
  owner: string;
  ms: number;
  /**
   * A step's own end: the transition happens only while this lease owner still holds the operation, so a
   * process whose lease was taken over cannot end an operation another process now drives (G2).
   */
  leaseOwner?: string;
  /**
   * Nothing in the completing process observes the terminal points (no hook of any family, no subscriber):
   * an operation with no parent to report to (P5) is recorded with its terminal sequence done in the
   * transition's own statement — no hold, no later mark, nothing a reconciler would run (E3).
   */
  nothingOwed?: boolean;
}

/** A deferred call's placeholder: `empty` until its result is published, then `final`. */
export type PlaceholderState = 'empty' | 'final';

export type NewStoredIntervention = Pick<StoredIntervention, 'toolCallId' | 'stepIndex' | 'callIndex' | 'identifier' | 'apiName' | 'args' | 'kind'>;

export type ToolMessage = NewMessage & { role: 'tool'; toolCallId: string };

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

/**
 * "Not found" is one error type here: a write to an operation that does not exist rejects with
 * `UnknownOperationError` (`runtime-errors.ts`); an implementation maps its own (persistence's
 * `OperationNotFoundError`) before it reaches the runtime. Reads answer `null` instead.
 */
export interface RuntimeStore {
  /** Operation, caller hooks and the user's prompt, in one transaction; an idempotency key returns the existing one. */
  createOperation(input: NewOperation): Promise<StoredOperation>;
  getOperation(id: string): Promise<StoredOperation | null>;
  /** Which of `operationIds` are completed, in one read per chunk (the safety re-check of whoever waits on many). */
  completedAmong(operationIds: readonly string[]): Promise<string[]>;
  callerHooks(operationId: string): Promise<StoredCallerHook[]>;
  messages(operationId: string): Promise<StoredMessage[]>;
  /**
   * What a step begins with: the operation and its conversation as committed now (null: no such operation).
   * An implementation may answer from what this process committed last (no reload of what the step
   * before just wrote) after checking that nobody changed either since — or without checking when
   * that commit was fenced by `leaseOwner`, the step's own lease: held since, so no other step ran, and a
   * commit's version check refuses whatever else wrote meanwhile.
   */
  stepState(operationId: string, leaseOwner?: string): Promise<{ operation: StoredOperation; messages: StoredMessage[] } | null>;
  /** Appends a message and applies `patch` to the operation in one transaction, if its version still matches. */
  commit(
    operationId: string,
    expectedVersion: number,
    message: NewMessage | undefined,
    patch: StepPatch,
    /** Queue mode: the commit also requires this worker to still hold the operation's lease (a fencing check). */
    leaseOwner?: string,
    options?: CommitOptions,
  ): Promise<{ operation: StoredOperation; message?: StoredMessage }>;
  /** The terminal transition, exactly once: false when the operation was already completed. */
  complete(
    operationId: string,
    reason: TerminalReason,
    error?: TerminalFailure,
    /** Who runs the terminal sequence, and how long before a reconciler may take it over (default 60 s). */
    hold?: TerminalHold,
  ): Promise<boolean>;

  /**
   * A completed operation and its conversation, for its terminal sequence (null operation: there is none).
   * Neither changes after the terminal transition (G5), so an implementation may answer from what this
   * process's `complete` of it returned and the conversation this process committed, without reading.
   */
  completedState(operationId: string): Promise<{ operation: StoredOperation | null; messages: StoredMessage[] }>;
  /** The terminal sequence finished (hooks, the sub-agent bridge): nothing is owed any more. */
  markTerminalHooksDone(operationId: string): Promise<void>;
  /** Completed operations whose terminal sequence is owed by a process that died, claimed for `owner`. */
  claimOwedTerminalHooks(owner: string, holdMs: number, limit?: number): Promise<StoredOperation[]>;
  /** Writes the buffered timeline records now (a queue step ends, a terminal sequence ends). */
  flushTimeline(): Promise<void>;

  /** Every intervention of the operation, in step then call order. */
  interventions(operationId: string): Promise<StoredIntervention[]>;
  /** Records the interventions not recorded yet; deferred ones get their empty placeholder (one transaction). */
  recordInterventions(operationId: string, items: readonly NewStoredIntervention[]): Promise<void>;
  /** running → waiting while something is pending: true when the operation now waits. */
  pause(operationId: string): Promise<boolean>;
  /** Claims an approved call for one executor: false when someone claimed it before. */
  claim(operationId: string, toolCallId: string, claimant: string): Promise<boolean>;
  /** The deferred placeholder's state, or null when the call has none. */
  placeholderState(operationId: string, toolCallId: string): Promise<PlaceholderState | null>;
  /**
   * Holds the empty placeholder for `claimant` while it runs the result's after-chain (G5), for `holdMs`
   * (calling again renews): false while another decider holds it, while a received result of a decider that
   * died waits for a reconciler, or once it is final. With `received`, the result being decided is stored by
   * the same statement (SPEC G3), until the publish replaces it with the final one.
   */
  claimDeferred(operationId: string, toolCallId: string, claimant: string, holdMs: number, received?: ToolResult): Promise<boolean>;
  /** Lets go of `claimant`'s claim and the result it stored (its after-chain failed), so another result may be decided. */
  releaseDeferred(operationId: string, toolCallId: string, claimant: string): Promise<void>;
  /**
   * SPEC G3: received deferred results whose decider died during the after-chain (its claim lapsed), oldest
   * first, each claimed for `claimant` for `holdMs` (a compare-and-set: two reconcilers never both get one).
   * Those of completed operations are dropped, never handed out (G5).
   */
  claimReceivedDeferred(claimant: string, holdMs: number, limit?: number): Promise<ReceivedDeferredResult[]>;

  /**
   * SPEC G3: a decision and everything it makes happen, in one transaction under the operation's row lock —
   * refused (nothing written) when the operation is completed (G5) or the item is not pending; else the
   * decision, the owed `effects.notify` rows (claimed by `effects.claimant`), and then for `approve` /
   * `rejectAndContinue` waiting → running when nothing else is pending, for `reject` the receipt and the
   * terminal transition (reason `interrupted`, the terminal sequence owed like any other).
   */
  decideDurably(
    operationId: string,
    toolCallId: string,
    decision: InterventionDecision,
    effects: DecisionEffects,
  ): Promise<DurableDecision>;
  /**
   * The compare-and-set publish of a deferred result (L4) by the placeholder's claimant, and waiting → running
   * in the same transaction when nothing else is pending (SPEC G3): `already_completed` when the placeholder is
   * final or held by another; `operation_completed` when the operation ended (G5), read in the same transaction.
   */
  publishDeferredDurably(operationId: string, toolCallId: string, result: ToolResult, message: ToolMessage, claimant: string): Promise<DurableDeferredPublish>;
  /**
   * Undelivered notifications whose claim is free or lapsed, oldest first, each claimed for `owner` for
   * `holdMs` (a compare-and-set: two reconcilers never both get one). Only rows of operations that exist.
   */
  claimOwedNotifications(owner: string, holdMs: number, limit?: number): Promise<OwedNotification[]>;
  /** The notification was delivered: nothing is owed any more. */
  markNotificationDelivered(id: string): Promise<void>;
  /** `owner` lets go of a notification it could not deliver, so the next reconcile pass retries it. */
  releaseNotification(id: string, owner: string): Promise<void>;
  /** Extends `owner`'s claim while the delivery runs (a webhook slower than the claim); false once it is no longer `owner`'s. */
  renewNotificationClaim(id: string, owner: string, holdMs: number): Promise<boolean>;
}
export const RUNTIME_STORE = Symbol('nest-agent-hooks:RuntimeStore');
