/**
 * One abort signal per outgoing request (a webhook, a model call) that fires on the request's single
 * deadline (connect, headers and body together) or when the caller aborts, remembering which came first
 * so errors can say `timeout` or `cancelled`. Cancellation is reported whenever the caller aborted, even
 * if the deadline also passed.
 */
import { EventEmitter } from 'node:events';

/** The largest delay `setTimeout` honours. */
const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * The signal handed to undici, which takes an EventEmitter with `aborted`, `reason` and an `'abort'` event
 * as well as an `AbortSignal`. An `AbortController` with undici's listener on it costs several
 * microseconds per request (EventTarget), a measurable share of a loopback webhook control.
 */
export class DeadlineSignal extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;

  /** Fires once; later calls keep the first reason. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

export class RequestDeadline {
  private readonly aborter = new DeadlineSignal();
  private readonly timer: NodeJS.Timeout;
  private expired = false;

  readonly timeoutMs: number;

  constructor(
    timeoutMs: number,
    private readonly caller?: AbortSignal,
  ) {
    this.timeoutMs = Math.min(Math.max(1, Math.ceil(timeoutMs)), MAX_TIMEOUT_MS);
    this.timer = setTimeout(() => {
      this.expired = true;
      this.aborter.abort(new Error('deadline passed'));
    }, this.timeoutMs);
    // The deadline alone never keeps the process alive.
    this.timer.unref();
    caller?.addEventListener('abort', this.onCallerAbort, { once: true });
    if (caller?.aborted) this.onCallerAbort();
  }

  /** Aborts the request (connect, queueing, headers and body reading): pass it as undici's `signal`. */
  get signal(): DeadlineSignal {
    return this.aborter;
  }

  get cancelled(): boolean {
    return this.caller?.aborted === true;
  }

  get timedOut(): boolean {
    return this.expired && !this.cancelled;
  }

  /** Stops the timer and drops the caller listener; safe to call more than once. */
  dispose(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this.onCallerAbort);
  }

  private readonly onCallerAbort = (): void => {
    this.aborter.abort(new Error('request cancelled'));
  };
}
