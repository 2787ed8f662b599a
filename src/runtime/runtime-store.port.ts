/**
 * What the runtime needs from persistence (the `persistence/` room implements it). Every step reads the
 * operation from here and commits its effects here, so any process can run the next step (DESIGN §4).
 */
import type { TerminalReason, ToolResult } from '../hooks/agent-events.js';
import type {
  DurableDecision,
  DurableDeferredPublish,
  DecisionEffects,
  InterventionDecision,
  NewStoredIntervention,
  OwedNotification,
  PlaceholderState,
  ReceivedDeferredResult,
  StoredIntervention,
} from './stored-interventions.js';
import type {
  CommitOptions,
  NewMessage,
  NewOperation,
  StepPatch,
  StoredCallerHook,
  StoredMessage,
  StoredOperation,
  TerminalFailure,
  TerminalHold,
  ToolMessage,
} from './stored-operation.js';

// The records the port speaks in, importable from here as from their own files.
export type * from './stored-interventions.js';
export type * from './stored-operation.js';

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
