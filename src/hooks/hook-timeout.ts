import { HookTimeoutError } from './hook-errors.js';

/** Resolves like `work`, or rejects with `HookTimeoutError` after `ms`; the timer never outlives the race. */
export function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HookTimeoutError(ms)), ms);
    timer.unref?.();
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
