import { backoff, backoffDelayMs } from '../../../src/runtime/tools/tool-backoff.js';
import { isRetryable, runAttempts } from '../../../src/runtime/tools/tool-attempts.js';
import { ToolError } from '../../../src/runtime/tools/tool-types.js';

describe('F3 backoff with full jitter', () => {
  it('F3: a random delay in [0, cap], the cap doubling per attempt up to maxDelayMs', () => {
    const retry = { attempts: 5, initialDelayMs: 100, maxDelayMs: 300 };
    expect(backoffDelayMs(retry, 1, () => 0)).toBe(0);
    expect(backoffDelayMs(retry, 1, () => 0.999)).toBe(99);
    expect(backoffDelayMs(retry, 2, () => 0.5)).toBe(100);
    expect(backoffDelayMs(retry, 4, () => 0.999)).toBe(299);
  });

  it('F3: an abort ends a backoff at once with a cancelled tool error', async () => {
    const controller = new AbortController();
    const waiting = backoff(3_600_000, controller.signal, 'kb/lookup');
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'cancelled' });
  });

  it('F3: only failures that may pass are retried; attempts stop at the count', async () => {
    expect(isRetryable(new ToolError('timeout', 't'))).toBe(true);
    expect(isRetryable(new ToolError('unavailable', 'u'))).toBe(true);
    expect(isRetryable(new ToolError('invalid_arguments', 'i'))).toBe(false);
    expect(isRetryable(new ToolError('cancelled', 'c'))).toBe(false);
    const reported: number[] = [];
    let calls = 0;
    const failing = runAttempts(
      async () => {
        calls++;
        throw new ToolError('execution_failed', 'no');
      },
      { toolName: 'x/y', retry: { attempts: 3, initialDelayMs: 0 }, signal: new AbortController().signal, onRetry: async (_e, n) => void reported.push(n) },
    );
    await expect(failing).rejects.toMatchObject({ code: 'execution_failed' });
    expect(calls).toBe(3);
    expect(reported).toEqual([1, 2]);
  });
});
