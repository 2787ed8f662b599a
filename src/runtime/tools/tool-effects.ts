/**
 * How a tool call may fail and be tried again (SPEC F2, F3), as declared on `@Tool`, on an MCP server or a
 * per-tool override in agents.yaml, and on an agent: the settings, their bounds and the one check that both
 * the `@Tool` explorer and the config schema apply, so the two never disagree.
 */

/** `retry: { attempts, initialDelayMs?, maxDelayMs? }`: attempts in all, the first included. */
export interface ToolRetry {
  readonly attempts: number;
  /** The cap of the first backoff (full jitter: a random delay in [0, cap]); doubles each attempt. */
  readonly initialDelayMs?: number;
  /** The largest cap a backoff reaches. */
  readonly maxDelayMs?: number;
}

/** What a tool declares about its effects; each field optional, the most specific declaration wins. */
export interface ToolEffects {
  /** F2: running the call twice with the same key has the effect of running it once. */
  readonly idempotent?: boolean;
  /** F3: the deadline of one attempt, in milliseconds. */
  readonly timeoutMs?: number;
  /** F3: allowed on idempotent tools only. */
  readonly retry?: ToolRetry;
}

/** F3: the deadline of a call nothing else sets a deadline for. */
export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;

/** F3: a deadline beyond a day is a mistake, not a setting (a longer job belongs to a deferred tool). */
export const MAX_TOOL_TIMEOUT_MS = 86_400_000;
export const MAX_RETRY_ATTEMPTS = 10;
export const DEFAULT_RETRY_INITIAL_DELAY_MS = 500;
export const DEFAULT_RETRY_MAX_DELAY_MS = 30_000;
/** Backoff caps, like deadlines, stay under what a timer can hold. */
export const MAX_RETRY_DELAY_MS = 3_600_000;

export const TIMEOUT_PROBLEM = `must be an integer from 1 to ${MAX_TOOL_TIMEOUT_MS} (milliseconds)`;
export const ATTEMPTS_PROBLEM = `must be an integer from 1 to ${MAX_RETRY_ATTEMPTS}`;
export const DELAY_PROBLEM = `must be an integer from 0 to ${MAX_RETRY_DELAY_MS} (milliseconds)`;
export const RETRY_NOT_IDEMPOTENT = 'retry is allowed on idempotent tools only: declare idempotent: true (SPEC F3)';

export function isToolTimeout(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_TOOL_TIMEOUT_MS;
}

/** A problem with a `retry` value (`key` names where it is), or undefined. */
export function retryProblem(retry: unknown): { key: string; problem: string } | undefined {
  if (retry === null || typeof retry !== 'object' || Array.isArray(retry)) return { key: 'retry', problem: 'must be a mapping { attempts }' };
  const { attempts, initialDelayMs, maxDelayMs, ...rest } = retry as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) return { key: `retry.${unknown}`, problem: 'unknown key' };
  if (!(Number.isInteger(attempts) && (attempts as number) >= 1 && (attempts as number) <= MAX_RETRY_ATTEMPTS)) return { key: 'retry.attempts', problem: ATTEMPTS_PROBLEM };
  for (const [key, value] of [['initialDelayMs', initialDelayMs], ['maxDelayMs', maxDelayMs]] as const) {
    if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_RETRY_DELAY_MS)) return { key: `retry.${key}`, problem: DELAY_PROBLEM };
  }
  return undefined;
}

/**
 * The effects of a `@Tool`, checked: `{ effects }`, or `{ problem }` naming the option (the explorer turns
 * it into a bootstrap error naming class and method).
 */
export function checkToolEffects(options: { idempotent?: unknown; timeoutMs?: unknown; retry?: unknown }): { effects: ToolEffects } | { problem: string } {
  const { idempotent, timeoutMs, retry } = options;
  if (idempotent !== undefined && typeof idempotent !== 'boolean') return { problem: 'idempotent must be a boolean' };
  if (timeoutMs !== undefined && !isToolTimeout(timeoutMs)) return { problem: `timeoutMs ${TIMEOUT_PROBLEM}` };
  if (retry !== undefined) {
    const problem = retryProblem(retry);
    if (problem) return { problem: `${problem.key} ${problem.problem}` };
    if (idempotent !== true) return { problem: RETRY_NOT_IDEMPOTENT };
  }
  return {
    effects: {
      ...(idempotent !== undefined ? { idempotent } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(retry !== undefined ? { retry: Object.freeze({ ...(retry as ToolRetry) }) } : {}),
    },
  };
}
