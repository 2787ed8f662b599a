/**
 * K4: which failed model calls are tried again, and how long to wait first. Pure: the caller supplies the
 * random source, so the delays are testable without a clock.
 */
import { errorType } from '../../hooks/hook-errors.js';
import { ModelError } from './chat-model.js';

export interface ModelRetrySettings {
  /** Attempts in all, the first included; 1 means no retry. */
  attempts: number;
  /** The backoff ceiling of the first retry; doubled per retry up to `maxDelayMs`. */
  initialDelayMs: number;
  /** The cap of any wait, a provider's `Retry-After` included. */
  maxDelayMs: number;
}

/** K4's default: three attempts in all. */
export const DEFAULT_MODEL_RETRY: Readonly<ModelRetrySettings> = Object.freeze({ attempts: 3, initialDelayMs: 500, maxDelayMs: 30_000 });

/** The longest delay `setTimeout` honours. */
const MAX_TIMER_MS = 2_147_483_647;

/** HTTP statuses worth another attempt (K4): the request timed out, conflicted, was rate limited, or the server failed. */
function retryableStatus(status: number | undefined): boolean {
  return status === 408 || status === 409 || status === 429 || (status !== undefined && status >= 500 && status <= 599);
}

/** One failed attempt as the retry loop, observers and spans see it: a type and a status, never a body. */
export interface AttemptFailure {
  /** A `ModelError`'s code (`http_error`, `timeout`, …), else the error's type. */
  type: string;
  status?: number;
  retryable: boolean;
  retryAfterMs?: number;
}

export function attemptFailure(error: unknown): AttemptFailure {
  if (!(error instanceof ModelError)) return { type: errorType(error), retryable: false };
  const retryable = error.code === 'network_error' || error.code === 'timeout' || (error.code === 'http_error' && retryableStatus(error.status));
  return {
    type: error.code,
    ...(error.status !== undefined ? { status: error.status } : {}),
    retryable,
    ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
  };
}

/**
 * The wait before attempt `failedAttempt + 1`: exponential backoff with full jitter (a uniform draw below
 * `initialDelayMs · 2^(failedAttempt−1)`, capped at `maxDelayMs`), but at least the provider's
 * `Retry-After` — itself never longer than the cap (K4).
 */
export function retryDelayMs(settings: ModelRetrySettings, failedAttempt: number, retryAfterMs: number | undefined, random: () => number = Math.random): number {
  const cap = Math.min(settings.maxDelayMs, MAX_TIMER_MS);
  const ceiling = Math.min(cap, settings.initialDelayMs * 2 ** Math.max(0, failedAttempt - 1));
  const jittered = Math.floor(random() * ceiling);
  if (retryAfterMs === undefined || !(retryAfterMs >= 0)) return jittered;
  return Math.max(jittered, Math.min(Math.ceil(retryAfterMs), cap));
}

/** Settings given in part (agents.yaml) filled from the default; an initial delay above the cap is the cap. */
export function retrySettings(given: Partial<ModelRetrySettings> | undefined): ModelRetrySettings {
  if (given === undefined) return DEFAULT_MODEL_RETRY;
  const maxDelayMs = given.maxDelayMs ?? DEFAULT_MODEL_RETRY.maxDelayMs;
  return {
    attempts: given.attempts ?? DEFAULT_MODEL_RETRY.attempts,
    initialDelayMs: Math.min(given.initialDelayMs ?? DEFAULT_MODEL_RETRY.initialDelayMs, maxDelayMs),
    maxDelayMs,
  };
}
