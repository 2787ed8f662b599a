/**
 * What one failed delivery attempt means: its error code (what the timeline records), whether trying
 * again can help, and how long the receiver asked us to wait. The error thrown back to BullMQ carries only
 * the client's own message (host and status, never a header value or a body), since BullMQ stores it in
 * Redis as the job's `failedReason`.
 */
import { UnrecoverableError } from 'bullmq';
import { errorCode, errorType } from '../../hooks/hook-errors.js';
import { WebhookError } from '../../webhooks/webhook-error.js';

/** HTTP 410 Gone: the receiver says this hook's endpoint is gone for good. */
const GONE = 410;

/** A failed attempt BullMQ may retry; the backoff strategy reads `retryAfterMs`. */
export class DeliveryAttemptError extends Error {
  override readonly name = 'DeliveryAttemptError';

  constructor(
    message: string,
    readonly code: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export interface AttemptFailure {
  readonly code: string;
  /** No later attempt can succeed (410, a configuration problem, a `Retry-After` beyond the cap). */
  readonly unrecoverable: boolean;
  readonly retryAfterMs?: number;
  /** Safe to store and log: the client's message, or just the error's type. */
  readonly message: string;
}

export function attemptFailure(error: unknown, maxRetryAfterMs: number): AttemptFailure {
  if (!(error instanceof WebhookError)) {
    return { code: errorCode(error, 'network_error'), unrecoverable: false, message: `delivery attempt failed (${errorType(error)})` };
  }
  const retryAfterMs = error.retryAfterMs;
  const unrecoverable =
    error.code === 'configuration' || (error.code === 'http_error' && error.status === GONE) || (retryAfterMs !== undefined && retryAfterMs > maxRetryAfterMs);
  return { code: error.code, unrecoverable, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}), message: error.message };
}

/** The error to throw from the processor: BullMQ stops at an `UnrecoverableError`, otherwise backs off. */
export function attemptError(failure: AttemptFailure): Error {
  if (failure.unrecoverable) return new UnrecoverableError(failure.message);
  return new DeliveryAttemptError(failure.message, failure.code, failure.retryAfterMs);
}
