/**
 * What this process knows of an operation while it is live here: its run context (with the caller's token),
 * its cancel signal, its `done` promise, and where it stands. The state has one `phase`, moved only by the
 * methods below:
 * - `idle`: nothing of it runs here (it waits, another process drives it, or a watcher follows it);
 * - `driving`: a step loop of this process is on it;
 * - `finishing`: this process runs its terminal sequence, so a completion event is its own, not a cancel;
 * - `settled`: `done` settled (or was abandoned at shutdown); nothing changes any more.
 * A step loop that ends in the terminal sequence stays on the operation while it finishes (`stepLoopHere`):
 * a cancel or a resume that arrives then reaches the loop, as while it was driving.
 */
import type { ReachedLimit } from '../hooks/agent-events.js';
import type { RunContext } from '../hooks/contexts.js';
import type { OperationTraceRef, TraceSpan } from '../tracing/agent-tracer.js';
import { OURS } from '../tracing/gen-ai-attributes.js';
import type { OperationResult } from './operation-result.js';
import { handedOut } from './handed-out.js';
import { restoredContext } from './run-context-snapshot.js';
import type { StoredOperation } from './runtime-store.port.js';

export type LivePhase = 'idle' | 'driving' | 'finishing' | 'settled';

export class LiveOperation {
  readonly controller = new AbortController();
  readonly startedAt = performance.now();
  /** Steps run here (the fallback for `on_run_end`'s count). */
  steps = 0;
  /** The step's error, for `onError` and `run()`'s rejection. */
  error?: unknown;
  /** The limit a step ended the operation with (F4, F5), stored by the terminal transition. */
  limit?: ReachedLimit;
  /** The operation's trace (SPEC O3): what its work outside a step (finish, decisions) runs under. */
  trace?: OperationTraceRef;
  /**
   * The operation's first `invoke_agent` span, while this process that started it drives it; ended when it
   * stops driving (a pause, a hand-back) or settles, so a long wait or a restart never leaves it unexported.
   */
  private traceRoot?: TraceSpan;
  readonly done: Promise<OperationResult>;
  private end: 'open' | 'finishing' | 'settled' = 'open';
  private looping = false;
  /** A resume arrived while the loop was still returning from its pause: go on instead of stopping. */
  private resumeRequested = false;
  /** A completion watcher is subscribed (one per live operation). */
  private watched = false;
  private resolveDone!: (result: OperationResult) => void;
  private rejectDone!: (error: Error) => void;

  constructor(public runContext: RunContext) {
    // Nobody may be awaiting `done` when the app closes: that rejection is not an unhandled one.
    this.done = handedOut(
      new Promise<OperationResult>((resolve, reject) => {
        this.resolveDone = resolve;
        this.rejectDone = reject;
      }),
    );
  }

  get phase(): LivePhase {
    if (this.end !== 'open') return this.end;
    return this.looping ? 'driving' : 'idle';
  }

  /** A step loop of this process is on the operation (driving it, or running the terminal sequence it reached). */
  get stepLoopHere(): boolean {
    return this.looping;
  }

  /** This process ends the operation itself, or `done` settled already: a completion event is no news. */
  get endsHere(): boolean {
    return this.end !== 'open';
  }

  /** A step loop (local) or a queued step (worker) starts on the operation here. */
  beginDriving(): void {
    this.looping = true;
  }

  /** The loop paused, handed the step back, lost the lease or never got it. */
  endDriving(): void {
    this.looping = false;
    this.endTraceRoot();
  }

  /** Holds the operation's first span until this process stops driving it. */
  holdTraceRoot(span: TraceSpan): void {
    this.traceRoot = span;
  }

  endTraceRoot(reason?: string): void {
    if (reason !== undefined) this.traceRoot?.set({ [OURS.reason]: reason });
    this.traceRoot?.end();
    this.traceRoot = undefined;
  }

  /** Asks a loop returning from its pause to go on. */
  requestResume(): void {
    this.resumeRequested = true;
  }

  /** Whether a resume was asked for since the last call (and forgets it). */
  takeResumeRequest(): boolean {
    const requested = this.resumeRequested;
    this.resumeRequested = false;
    return requested;
  }

  /** This process runs the terminal sequence from now on. */
  beginFinishing(): void {
    if (this.end === 'open') this.end = 'finishing';
  }

  /** A stop that this process was about to finish was refused: a completion event is news again. */
  cancelFinishing(): void {
    if (this.end === 'finishing') this.end = 'open';
  }

  /** The operation goes on without this process (its lease moved, or its end could not be written). */
  letGo(): void {
    this.cancelFinishing();
    this.looping = false;
    this.error = undefined;
  }

  /** Takes the watcher slot; false while a watcher is subscribed already. */
  startWatching(): boolean {
    if (this.watched) return false;
    this.watched = true;
    return true;
  }

  /** The watcher fired or failed: a later `watch` subscribes again. */
  stopWatching(): void {
    this.watched = false;
  }

  settle(result: OperationResult): void {
    if (this.end === 'settled') return;
    this.end = 'settled';
    this.endTraceRoot(result.reason);
    this.resolveDone(result);
  }

  /** The app closed before the operation completed: `done` rejects (the operation goes on elsewhere or after a restart). */
  abandon(error: Error): void {
    if (this.end === 'settled') return;
    this.end = 'settled';
    this.endTraceRoot();
    this.rejectDone(error);
  }
}

/** The live state of an operation this process did not start (a restart, another process's): context and trace from the database, no token. */
export function restoredLive(operation: StoredOperation): LiveOperation {
  const live = new LiveOperation(restoredContext(operation.id, operation.runContext));
  live.trace = { id: operation.id, agentId: operation.agentId, ...(operation.traceContext ? { traceContext: operation.traceContext } : {}) };
  return live;
}
