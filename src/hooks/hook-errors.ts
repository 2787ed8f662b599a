/** Errors of the hooks room. Messages name the point and hook, never a payload, value or secret. */
import type { HookPoint } from './hook-points.js';

/** An engine-family hook failed under `failure_policy: fail` (E6, DESIGN §3). */
export class HookFailedError extends Error {
  override readonly name = 'HookFailedError';
  readonly code = 'hook_failed';

  constructor(
    readonly point: HookPoint,
    readonly hookId: string,
    cause: unknown,
    detail?: string,
  ) {
    super(`Hook "${hookId}" at ${point} failed: ${detail ?? errorType(cause)}`, { cause });
  }
}

/** A hook definition or registration is invalid; raised before anything changes. */
export class HookConfigurationError extends Error {
  override readonly name = 'HookConfigurationError';
  readonly code = 'configuration';
}

/** One failed delivery of a `fallback: 'none'` webhook (D2). */
export interface CriticalDeliveryFailure {
  readonly point: HookPoint;
  readonly hookId: string;
  readonly code: string;
}

/** Webhooks with `fallback: 'none'` that failed, collected after all sibling hooks ran (D2). */
export class CriticalHookDeliveryError extends Error {
  override readonly name = 'CriticalHookDeliveryError';
  readonly code = 'critical_hook_delivery';

  constructor(readonly failures: readonly CriticalDeliveryFailure[]) {
    super(
      `${failures.length} critical hook deliver${failures.length === 1 ? 'y' : 'ies'} failed: ` +
        failures.map((f) => `${f.hookId}@${f.point} (${f.code})`).join(', '),
    );
  }
}

/** A hook took longer than its `timeoutMs`. */
export class HookTimeoutError extends Error {
  override readonly name = 'HookTimeoutError';
  readonly code = 'timeout';

  constructor(readonly timeoutMs: number) {
    super(`hook timed out after ${timeoutMs} ms`);
  }
}

/** The error's type name: what logs and outcome records may say about an error (S3). */
export function errorType(error: unknown): string {
  // Duck-typed as well: an error thrown by code from another realm (a plugin loaded outside this one) is
  // not `instanceof Error` here.
  const errorLike =
    error instanceof Error ||
    (error !== null && typeof error === 'object' && typeof (error as Error).name === 'string' && typeof (error as Error).message === 'string');
  if (!errorLike) return typeof error;
  const { name } = error as Error;
  return name && name !== 'Error' ? name : (error as object).constructor?.name || 'Error';
}

/** The error's `code` if it has a string one, else a fallback. */
export function errorCode(error: unknown, fallback: string): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.length > 0 ? code : fallback;
}
