/**
 * Buffers hook outcome records (the dispatcher's `HookOutcomeSink`) and writes them in batches, so the
 * timeline does not cost a database round trip per hook invocation (DESIGN §5).
 *
 * - A write starts when `maxBatch` records are buffered, or `flushIntervalMs` after the first record of
 *   a batch arrived, or on `flush()` / `close()`.
 * - One write at a time, oldest records first: rows reach the database in the order they were recorded.
 * - A failed write loses nothing: its records go back to the front of the buffer and are retried with
 *   backoff (`retryDelayMs` doubling up to `maxRetryDelayMs`); `flush()` rejects so a caller that must
 *   know (shutdown, a test) does; background failures go to `onError`.
 * - `record()` never throws and never waits (the sink contract). Records without an `operationId`
 *   (hooks that ran outside an operation, e.g. MCP requests at start) have no timeline and are not kept.
 * - Timers are unref'd: call `close()` at shutdown (the module does, on application shutdown) to write
 *   what is still buffered.
 */
import type { HookOutcomeRecord } from '../hooks/hook-outcome.js';
import type { NewHookOutcome } from './records.js';

/** Where batches go; `HookOutcomeStore` is one. */
export interface OutcomeWriter {
  append(outcomes: readonly NewHookOutcome[]): Promise<void>;
}

export interface OutcomeBatcherOptions {
  /** Records per write, and the buffer size that starts a write at once. Default 100. */
  maxBatch?: number;
  /** Longest a record waits in the buffer before a write starts. Default 250 ms. */
  flushIntervalMs?: number;
  /** First retry delay after a failed write. Default 250 ms. */
  retryDelayMs?: number;
  /** Retry delay ceiling. Default 5 s. */
  maxRetryDelayMs?: number;
  /** Stamps `at` when a record arrives. Default the system clock. */
  clock?: () => Date;
  /** A background write failed (its records are kept and retried). Must not throw. */
  onError?: (error: unknown) => void;
}

export class OutcomeBatcher {
  private readonly maxBatch: number;
  private readonly flushIntervalMs: number;
  private readonly retryDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private buffer: NewHookOutcome[] = [];
  /** Serializes writes: each drain starts after the previous one settled. */
  private queue: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  /** A background drain is queued and has not started yet: no need to queue another. */
  private drainQueued = false;
  /** The last write failed: only the retry timer (or an explicit flush) writes until one succeeds. */
  private nextRetryDelayMs: number | undefined;
  /** Writes queued or running (`flush`, `writeWith`): a record may be on its way to the database. */
  private writing = 0;

  constructor(
    private readonly writer: OutcomeWriter,
    private readonly options: OutcomeBatcherOptions = {},
  ) {
    this.maxBatch = Math.max(1, options.maxBatch ?? 100);
    this.flushIntervalMs = Math.max(0, options.flushIntervalMs ?? 250);
    this.retryDelayMs = Math.max(1, options.retryDelayMs ?? 250);
    this.maxRetryDelayMs = Math.max(this.retryDelayMs, options.maxRetryDelayMs ?? 5000);
  }

  /** Records buffered and not yet written. */
  get pending(): number {
    return this.buffer.length;
  }

  /** The `HookOutcomeSink` method: buffers the record (stamped now); never throws. */
  record(outcome: HookOutcomeRecord): void {
    if (outcome.operationId === undefined) return;
    this.buffer.push({
      operationId: outcome.operationId,
      at: (this.options.clock?.() ?? new Date()).toISOString(),
      point: outcome.point,
      hookId: outcome.hookId,
      source: outcome.source,
      outcome: outcome.outcome,
      ...(outcome.errorCode !== undefined ? { errorCode: outcome.errorCode } : {}),
      latencyMs: outcome.latencyMs,
      ...(outcome.toolCallId !== undefined ? { toolCallId: outcome.toolCallId } : {}),
    });
    if (this.nextRetryDelayMs !== undefined) return; // failing: the retry timer owns the next write
    if (this.buffer.length >= this.maxBatch) this.drainInBackground();
    else this.startTimer(this.flushIntervalMs);
  }

  /**
   * Writes everything buffered so far (and whatever arrives while it writes). Rejects with the write's
   * error if one fails; the unwritten records stay buffered and a retry is scheduled.
   */
  flush(): Promise<void> {
    this.clearTimer();
    this.writing++;
    const run = this.queue.then(async () => {
      try {
        await this.drain();
      } finally {
        this.writing--;
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Runs `work` with the records buffered by then, as one of this batcher's writes — after the writes
   * before it, before any after — so `work` can write them in a transaction of its own (a step commit on
   * SQLite writes them with the step). More than `maxBatch` buffered (after an outage): the oldest are
   * written first in batches of their own, so `work` gets at most `maxBatch`; if one of those writes fails,
   * `work` does not run and its error is thrown. If `work` throws, its records go back to the front and are
   * written by the timer (a refused commit is not a database failure: no backoff). With nothing buffered and
   * nothing being written, `work` runs at once with no records.
   */
  writeWith<T>(work: (records: readonly NewHookOutcome[]) => Promise<T>): Promise<T> {
    if (this.buffer.length === 0 && this.writing === 0) return work([]);
    this.clearTimer();
    this.writing++;
    const run = this.queue.then(async () => {
      try {
        while (this.buffer.length > this.maxBatch) await this.writeOldest();
        const batch = this.buffer.splice(0);
        try {
          const result = await work(batch);
          // Written: whatever failed before is behind us.
          if (batch.length > 0) this.nextRetryDelayMs = undefined;
          return result;
        } catch (error) {
          this.buffer.unshift(...batch);
          throw error;
        }
      } finally {
        this.writing--;
        // The timer was cleared for this write: whatever is buffered now gets one again.
        if (this.buffer.length > 0) this.startTimer(this.nextRetryDelayMs ?? this.flushIntervalMs);
      }
    });
    this.queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** One batch of the oldest records; a failure puts it back in front and schedules the retry. */
  private async writeOldest(): Promise<void> {
    const batch = this.buffer.splice(0, this.maxBatch);
    try {
      await this.writer.append(batch);
    } catch (error) {
      // Back to the front, ahead of anything recorded meanwhile: order is kept, nothing is lost.
      this.buffer.unshift(...batch);
      this.scheduleRetry();
      throw error;
    }
  }

  /** Stops the timers and writes what is buffered (rejects, keeping the records, if that fails). */
  async close(): Promise<void> {
    await this.flush();
    this.clearTimer();
  }

  private drainInBackground(): void {
    if (this.drainQueued) return;
    this.drainQueued = true;
    this.flush().catch((error: unknown) => this.reportError(error));
  }

  private async drain(): Promise<void> {
    this.drainQueued = false;
    while (this.buffer.length > 0) await this.writeOldest();
    this.nextRetryDelayMs = undefined;
  }

  private scheduleRetry(): void {
    const delay = this.nextRetryDelayMs ?? this.retryDelayMs;
    this.nextRetryDelayMs = Math.min(delay * 2, this.maxRetryDelayMs);
    this.clearTimer();
    this.startTimer(delay);
  }

  private startTimer(delayMs: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.drainInBackground();
    }, delayMs);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private reportError(error: unknown): void {
    try {
      this.options.onError?.(error);
    } catch {
      // An error reporter that throws must not turn into an unhandled rejection.
    }
  }
}
