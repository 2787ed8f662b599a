/**
 * SPEC F3: the wait between two attempts of a call — full jitter (a random delay in [0, cap], the cap
 * doubling each attempt up to `maxDelayMs`) — and a sleep that a cancellation or a shutdown ends at once.
 */
import { DEFAULT_RETRY_INITIAL_DELAY_MS, DEFAULT_RETRY_MAX_DELAY_MS, type ToolRetry } from './tool-effects.js';
import { ToolError } from './tool-types.js';

/** The wait before attempt `attempt + 1`, after attempt `attempt` (1-based) failed. */
export function backoffDelayMs(retry: ToolRetry, attempt: number, random: () => number = Math.random): number {
  const initial = retry.initialDelayMs ?? DEFAULT_RETRY_INITIAL_DELAY_MS;
  const max = Math.max(retry.maxDelayMs ?? DEFAULT_RETRY_MAX_DELAY_MS, 0);
  const cap = Math.min(max, initial * 2 ** (attempt - 1));
  return Math.floor(random() * cap);
}

/** Resolves after `ms`, or rejects with `ToolError('cancelled')` as soon as `signal` aborts. */
export function backoff(ms: number, signal: AbortSignal, toolName: string): Promise<void> {
  const cancelled = () => new ToolError('cancelled', `${toolName} was cancelled`, 'AbortError');
  if (signal.aborted) return Promise.reject(cancelled());
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(cancelled());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
