/**
 * When a failed delivery is tried again: exponential backoff with "equal jitter" (half the delay fixed,
 * half random, so retries of many deliveries spread out without ever coming back immediately), capped,
 * and never earlier than the receiver's `Retry-After`. Registered as the worker's BullMQ custom backoff
 * strategy; BullMQ hands it the error the attempt threw.
 */
import type { DeliverySettings } from './delivery-settings.js';

type BackoffSettings = Pick<DeliverySettings, 'backoffDelayMs' | 'maxBackoffDelayMs' | 'maxRetryAfterMs'>;

/** `attemptsMade` counts the failed attempts so far (1 before the first retry). */
export function deliveryBackoff(settings: BackoffSettings, random: () => number = Math.random) {
  return (attemptsMade: number, _type?: string, error?: Error): number => {
    const exponent = Math.max(0, attemptsMade - 1);
    const ceiling = Math.min(settings.maxBackoffDelayMs, settings.backoffDelayMs * 2 ** Math.min(exponent, 30));
    const delay = Math.round(ceiling / 2 + (random() * ceiling) / 2);
    const retryAfter = retryAfterOf(error);
    // A longer `Retry-After` ends the retries before this is asked (the processor marks it final).
    return retryAfter === undefined ? delay : Math.max(delay, Math.min(retryAfter, settings.maxRetryAfterMs));
  };
}

function retryAfterOf(error: Error | undefined): number | undefined {
  const value = (error as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}
