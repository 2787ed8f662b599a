import { describe, expect, it } from '@jest/globals';
import { MAX_DEFERRED_RETRY_DELAY_MS, deferredRetryDelayMs } from '../../../src/runtime/deferred-claim.js';

describe('deferredRetryDelayMs (G3: a received result that keeps failing backs off, is never dropped)', () => {
  const now = Date.parse('2026-12-01T12:00:00.000Z');
  const receivedAgo = (ms: number) => new Date(now - ms).toISOString();

  it('G3: waits as long as the result has waited already, so tries back off exponentially', () => {
    expect(deferredRetryDelayMs(receivedAgo(60_000), 15_000, now)).toBe(60_000);
    expect(deferredRetryDelayMs(receivedAgo(120_000), 15_000, now)).toBe(120_000);
  });

  it('G3: at least one lease, at most ten minutes', () => {
    expect(deferredRetryDelayMs(receivedAgo(1_000), 15_000, now)).toBe(15_000);
    expect(deferredRetryDelayMs(receivedAgo(3 * 3_600_000), 15_000, now)).toBe(MAX_DEFERRED_RETRY_DELAY_MS);
    expect(MAX_DEFERRED_RETRY_DELAY_MS).toBe(600_000);
  });

  it('G3: an unreadable or future time stamp waits one lease', () => {
    expect(deferredRetryDelayMs('not a date', 15_000, now)).toBe(15_000);
    expect(deferredRetryDelayMs(new Date(now + 60_000).toISOString(), 15_000, now)).toBe(15_000);
  });
});
