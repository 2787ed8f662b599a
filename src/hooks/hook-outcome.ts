/** One record per hook invocation (the timeline, metrics and queue tests read these). Never a payload. */
import type { HookPoint } from './hook-points.js';
import type { HookSource } from './registered-hook.js';

export type HookOutcome = 'ok' | 'mocked' | 'allowed' | 'denied' | 'notification' | 'error';

/** How the hook ran: its in-process handler, or (no handler in this process) its webhook (W1, W2). */
export type HookTransport = 'handler' | 'webhook';

/**
 * Where a timeline row came from: a hook's source, or `runtime` for a verdict the runtime itself reached
 * without a hook (a call to a tool the agent was not offered, SPEC G1).
 */
export type TimelineSource = HookSource | 'runtime';

export interface HookOutcomeRecord {
  readonly operationId?: string;
  readonly point: HookPoint;
  readonly hookId: string;
  readonly source: TimelineSource;
  readonly outcome: HookOutcome;
  readonly errorCode?: string;
  readonly latencyMs: number;
  /**
   * A tool point's record: the call it belongs to (F1: the timeline derives the call's idempotency key from
   * it). Not set by the dispatcher: the runtime, which knows which call a dispatch serves, adds it.
   */
  readonly toolCallId?: string;
  /** Set by the dispatcher; lets metrics count webhook errors apart from handler errors. Not persisted. */
  readonly transport?: HookTransport;
}
