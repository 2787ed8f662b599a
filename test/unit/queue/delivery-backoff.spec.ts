import { UnrecoverableError } from 'bullmq';
import { deliveryBackoff } from '../../../src/queue/delivery/delivery-backoff.js';
import { attemptError, attemptFailure, DeliveryAttemptError } from '../../../src/queue/delivery/delivery-failure.js';
import { deliveryQueueName, resolveDeliverySettings } from '../../../src/queue/delivery/delivery-settings.js';
import { WebhookError } from '../../../src/webhooks/webhook-error.js';

const settings = { backoffDelayMs: 1_000, maxBackoffDelayMs: 60_000, maxRetryAfterMs: 3_600_000 };

describe('queued delivery backoff: exponential, jitter, Retry-After', () => {
  it('doubles per attempt, with half of each delay random (equal jitter)', () => {
    const low = deliveryBackoff(settings, () => 0);
    const high = deliveryBackoff(settings, () => 1);
    expect([1, 2, 3, 4].map((n) => low(n))).toEqual([500, 1_000, 2_000, 4_000]);
    expect([1, 2, 3, 4].map((n) => high(n))).toEqual([1_000, 2_000, 4_000, 8_000]);
  });

  it('is capped at maxBackoffDelayMs, however many attempts', () => {
    expect(deliveryBackoff(settings, () => 1)(40)).toBe(60_000);
    expect(deliveryBackoff(settings, () => 0)(1_000)).toBe(30_000);
  });

  it('never retries earlier than the Retry-After the last attempt carried', () => {
    const backoff = deliveryBackoff(settings, () => 0);
    expect(backoff(1, 'agent-hooks-webhook', new DeliveryAttemptError('503', 'http_error', 5_000))).toBe(5_000);
    // A Retry-After shorter than the backoff does not shorten it.
    expect(backoff(4, 'agent-hooks-webhook', new DeliveryAttemptError('503', 'http_error', 10))).toBe(4_000);
  });
});

describe('queued delivery attempt failures', () => {
  it('410 Gone is unrecoverable: BullMQ gets an UnrecoverableError', () => {
    const failure = attemptFailure(new WebhookError('http_error', 'webhook receiver at h answered HTTP 410', 410), 3_600_000);
    expect(failure).toMatchObject({ code: 'http_error', unrecoverable: true });
    expect(attemptError(failure)).toBeInstanceOf(UnrecoverableError);
  });

  it('a configuration problem is unrecoverable; network errors, timeouts and other statuses are retried', () => {
    expect(attemptFailure(new WebhookError('configuration', 'header x uses variable T, which is not set'), 1).unrecoverable).toBe(true);
    for (const error of [new WebhookError('network_error', 'n'), new WebhookError('timeout', 't'), new WebhookError('http_error', 'h', 500), new WebhookError('http_error', 'h', 404)]) {
      const failure = attemptFailure(error, 1_000);
      expect(failure.unrecoverable).toBe(false);
      expect(attemptError(failure)).toBeInstanceOf(DeliveryAttemptError);
    }
  });

  it('a Retry-After beyond maxRetryAfterMs ends the retries instead of retrying early', () => {
    const asked = new WebhookError('http_error', 'h', 429, 7_200_000);
    expect(attemptFailure(asked, 3_600_000)).toMatchObject({ unrecoverable: true, retryAfterMs: 7_200_000 });
    expect(attemptFailure(new WebhookError('http_error', 'h', 429, 60_000), 3_600_000)).toMatchObject({ unrecoverable: false, retryAfterMs: 60_000 });
  });

  it('an unknown error keeps only its type in the message (BullMQ stores it in Redis)', () => {
    const failure = attemptFailure(new Error('secret-looking detail'), 1);
    expect(failure.message).toBe('delivery attempt failed (Error)');
    expect(failure.code).toBe('network_error');
  });
});

describe('queued delivery settings', () => {
  it('queue names carry the agent-hooks- prefix', () => {
    expect(deliveryQueueName()).toBe('agent-hooks-webhooks');
    expect(deliveryQueueName('bench')).toBe('agent-hooks-bench');
    expect(deliveryQueueName('agent-hooks-x')).toBe('agent-hooks-x');
  });

  it('defaults are bounded; invalid tuning is refused', () => {
    const s = resolveDeliverySettings({ redis: 'redis://r:6379' });
    expect(s).toMatchObject({ redisUrl: 'redis://r:6379', queueName: 'agent-hooks-webhooks', attempts: 8, backoffDelayMs: 1_000, concurrency: 32 });
    expect(() => resolveDeliverySettings({}, { attempts: 0 })).toThrow('attempts must be a positive integer');
  });
});
