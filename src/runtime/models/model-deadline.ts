/**
 * One abort signal per model request that fires on the request's single deadline (connect, headers and
 * body together) or when the caller aborts, remembering which came first so the error can say `timeout`
 * or `cancelled`. A caller's cancellation is reported as such even if the deadline also passed.
 */
/** The largest delay `setTimeout` honours. */
const MAX_TIMEOUT_MS = 2_147_483_647;

export class ModelDeadline {
  readonly timeoutMs: number;
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private expired = false;

  constructor(
    timeoutMs: number,
    private readonly caller?: AbortSignal,
  ) {
    this.timeoutMs = Math.min(Math.max(1, Math.ceil(timeoutMs)), MAX_TIMEOUT_MS);
    this.timer = setTimeout(() => {
      this.expired = true;
      this.controller.abort(new Error('model deadline passed'));
    }, this.timeoutMs);
    // The deadline alone never keeps the process alive.
    this.timer.unref();
    caller?.addEventListener('abort', this.onCallerAbort, { once: true });
    if (caller?.aborted) this.onCallerAbort();
  }

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
    this.controller.abort(new Error('model request cancelled'));
  };
}
