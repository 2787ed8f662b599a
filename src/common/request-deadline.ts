/**
 * One abort signal per outgoing request (a webhook, a model call) that fires on the request's single
 * deadline (connect, headers and body together) or when the caller aborts, remembering which came first
 * so errors can say `timeout` or `cancelled`. Cancellation is reported whenever the caller aborted, even
 * if the deadline also passed.
 */
/** The largest delay `setTimeout` honours. */
const MAX_TIMEOUT_MS = 2_147_483_647;

export class RequestDeadline {
  private readonly controller = new AbortController();
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
      this.controller.abort(new Error('deadline passed'));
    }, this.timeoutMs);
    // The deadline alone never keeps the process alive.
    this.timer.unref();
    caller?.addEventListener('abort', this.onCallerAbort, { once: true });
    if (caller?.aborted) this.onCallerAbort();
  }

  /** Aborts the request (connect, queueing, headers and body reading). */
  get signal(): AbortSignal {
    return this.controller.signal;
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
    this.controller.abort(new Error('request cancelled'));
  };
}
