/**
 * SPEC K4: which failed model calls are retried, and the wait before the next attempt — exponential
 * backoff with full jitter, at least a valid Retry-After, never longer than the cap.
 */
import { ModelError } from '../../../src/runtime/models/chat-model.js';
import { attemptFailure, DEFAULT_MODEL_RETRY, retryDelayMs, retrySettings } from '../../../src/runtime/models/model-retry-policy.js';

const settings = { attempts: 5, initialDelayMs: 100, maxDelayMs: 1000 };
const http = (status: number, retryAfterMs?: number) => new ModelError('http_error', `HTTP ${status}`, status, undefined, retryAfterMs !== undefined ? { retryAfterMs } : {});

describe('K4 retry policy: what is retried', () => {
  it('K4: network errors, timeouts, 408, 409, 429 and every 5xx are retried', () => {
    expect(attemptFailure(new ModelError('network_error', 'reset')).retryable).toBe(true);
    expect(attemptFailure(new ModelError('timeout', 'slow')).retryable).toBe(true);
    for (const status of [408, 409, 429, 500, 502, 503, 504, 599]) expect({ status, retryable: attemptFailure(http(status)).retryable }).toEqual({ status, retryable: true });
  });

  it('K4: other 4xx, invalid responses, configuration errors, cancels and foreign errors are not retried', () => {
    for (const status of [400, 401, 403, 404, 413, 422]) expect({ status, retryable: attemptFailure(http(status)).retryable }).toEqual({ status, retryable: false });
    expect(attemptFailure(new ModelError('invalid_response', 'garbage')).retryable).toBe(false);
    expect(attemptFailure(new ModelError('configuration', 'no url')).retryable).toBe(false);
    expect(attemptFailure(new ModelError('cancelled', 'stop')).retryable).toBe(false);
    expect(attemptFailure(new TypeError('boom'))).toEqual({ type: 'TypeError', retryable: false });
  });

  it('K4: a failure is described by its code, status and Retry-After only', () => {
    expect(attemptFailure(http(429, 2000))).toEqual({ type: 'http_error', status: 429, retryable: true, retryAfterMs: 2000 });
    expect(attemptFailure(new ModelError('timeout', 'slow'))).toEqual({ type: 'timeout', retryable: true });
  });
});

describe('K4 retry policy: how long to wait', () => {
  it('K4: exponential backoff with full jitter: a uniform draw below initialDelayMs · 2^(n−1)', () => {
    expect(retryDelayMs(settings, 1, undefined, () => 0.999)).toBe(99);
    expect(retryDelayMs(settings, 2, undefined, () => 0.999)).toBe(199);
    expect(retryDelayMs(settings, 3, undefined, () => 0.5)).toBe(200);
    expect(retryDelayMs(settings, 1, undefined, () => 0)).toBe(0);
  });

  it('K4: the backoff never exceeds maxDelayMs, however many attempts failed', () => {
    expect(retryDelayMs(settings, 5, undefined, () => 0.999)).toBe(999);
    expect(retryDelayMs(settings, 60, undefined, () => 0.999)).toBe(999);
  });

  it('K4: a valid Retry-After is waited at least, even when the jitter draws less', () => {
    expect(retryDelayMs(settings, 1, 700, () => 0)).toBe(700);
    // The jitter may draw more than the header asks: the longer wait wins.
    expect(retryDelayMs({ ...settings, initialDelayMs: 1000 }, 1, 300, () => 0.9)).toBe(900);
  });

  it('K4: a Retry-After longer than the cap waits the cap, never longer', () => {
    expect(retryDelayMs(settings, 1, 3_600_000, () => 0.5)).toBe(1000);
  });

  it('K4: partial settings are filled from the default (3 attempts in all); an initial delay above the cap is the cap', () => {
    expect(retrySettings(undefined)).toEqual({ attempts: 3, initialDelayMs: 500, maxDelayMs: 30_000 });
    expect(retrySettings({ attempts: 5 })).toEqual({ ...DEFAULT_MODEL_RETRY, attempts: 5 });
    expect(retrySettings({ maxDelayMs: 100 })).toEqual({ attempts: 3, initialDelayMs: 100, maxDelayMs: 100 });
  });
});
