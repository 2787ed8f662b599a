/**
 * SPEC F3: the attempts of one call. A failed attempt of a tool with `retry` (idempotent tools only) is
 * reported and, after a full-jitter backoff that a cancellation ends at once, tried again — with the same
 * idempotency key, which the caller's `work` carries. The last failure is thrown to the caller to report.
 */
import { backoff, backoffDelayMs } from './tool-backoff.js';
import type { ToolRetry } from './tool-effects.js';
import { ToolError } from './tool-types.js';

export interface AttemptsOptions {
  /** `identifier/apiName`, for messages. */
  toolName: string;
  retry?: ToolRetry;
  signal: AbortSignal;
  /** A failed attempt that another one follows: reported before the backoff (`willRetry: true`). */
  onRetry(error: unknown, attempt: number): Promise<void>;
  random?: () => number;
}

/**
 * Tried again: a deadline passed, the tool or its transport failed, its server was unavailable. Never a
 * call that cannot succeed as made (arguments, an unknown tool) nor a cancelled one.
 */
export function isRetryable(error: unknown): boolean {
  return error instanceof ToolError && (error.code === 'timeout' || error.code === 'execution_failed' || error.code === 'unavailable');
}

/** Runs `work(attempt)` (1-based) until it succeeds, fails for good, or the attempts are used up. */
export async function runAttempts<T>(work: (attempt: number) => Promise<T>, options: AttemptsOptions): Promise<T> {
  const { retry, signal } = options;
  const attempts = retry?.attempts ?? 1;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work(attempt);
    } catch (error) {
      if (!retry || attempt >= attempts || !isRetryable(error) || signal.aborted) throw error;
      await options.onRetry(error, attempt);
      await backoff(backoffDelayMs(retry, attempt, options.random), signal, options.toolName);
    }
  }
}
