/**
 * The one way a test waits for something that happens in the background: read until a condition holds, or
 * fail naming what was awaited and the last value seen. The deadline is a hang guard, not a measure: a
 * condition met late is still met (timing goals live in bench/).
 */

const FIRST_INTERVAL_MS = 5;
const LONGEST_INTERVAL_MS = 50;

/** Reads `read()` until `check` holds for its value, and returns that value. */
export async function until<T>(read: () => T | Promise<T>, check: (value: T) => boolean, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let interval = FIRST_INTERVAL_MS;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not met within ${timeoutMs} ms; last value ${describe(value)}`);
    await new Promise((resolve) => setTimeout(resolve, interval));
    interval = Math.min(interval * 2, LONGEST_INTERVAL_MS);
  }
}

/** Waits until `check()` returns true. */
export async function eventually(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  await until(check, (met) => met, what, timeoutMs);
}

function describe(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 500 ? `${text.slice(0, 500)}…` : text;
  } catch {
    return String(value);
  }
}

/**
 * Time that passes on purpose: the work of a fake component (a slow tool, a slow receiver) or the pace of a
 * loop that acts like a person. Never a wait for a condition: that is `eventually`. `why` is for the reader.
 */
export async function pause(ms: number, why: string): Promise<void> {
  void why;
  await new Promise((resolve) => setTimeout(resolve, ms));
}
