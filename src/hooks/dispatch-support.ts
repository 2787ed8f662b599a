/** Small pieces of the dispatcher that need none of its state (kept apart so the dispatcher stays one job). */
import type { ToolResult } from './agent-events.js';
import type { DecisionReading } from './decision.js';
import type { HookOutcome } from './hook-outcome.js';
import type { ControlPoint, HookPoint } from './hook-points.js';
import type { RegisteredHook } from './registered-hook.js';
import { HOOK_CONTROL_ERROR, type DeniedVerdict } from './tool-verdict.js';
import type { MockOutcome } from './agent-events.js';

export class InvalidReturnError extends Error {
  override readonly name = 'InvalidReturnError';
  readonly code = 'invalid_return';
}

export class DeliveryUnavailableError extends Error {
  override readonly name = 'DeliveryUnavailableError';
  readonly code = 'configuration';
}

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as PromiseLike<unknown>).then === 'function';
}

export function outcomeOf(reading: DecisionReading): HookOutcome {
  switch (reading.kind) {
    case 'allow':
      return 'allowed';
    case 'deny':
      return 'denied';
    case 'notification':
      return 'notification';
    case 'invalid':
      return 'error';
  }
}

export function blocked(point: ControlPoint, hook: RegisteredHook, code: string): DeniedVerdict {
  return { outcome: 'control_error', phase: point, hookId: hook.id, reason: HOOK_CONTROL_ERROR, error: 'hook_control_error', errorCode: code };
}

/** M1: a `beforeToolCall` mock is a result with string content; `success` defaults to true. */
export function acceptToolMock(value: unknown): MockOutcome | null {
  if (value === null || typeof value !== 'object' || typeof (value as ToolResult).content !== 'string') return null;
  const result = value as ToolResult;
  return { isMocked: true, result: { ...result, success: result.success ?? true } };
}

/** Observe-only `beforeToolCall` handlers get a `mock()` that is never accepted. */
export function withInertMock(point: HookPoint, payload: unknown): unknown {
  if (point !== 'beforeToolCall' || typeof (payload as { mock?: unknown }).mock === 'function') return payload;
  return { ...(payload as object), mock: () => false };
}

/** `identifier/apiName` of a tool event, or undefined when either is not a string (W5). */
export function toolNameOf(payload: unknown): string | undefined {
  const p = payload as { identifier?: unknown; apiName?: unknown } | null;
  if (p && typeof p === 'object' && typeof p.identifier === 'string' && typeof p.apiName === 'string') {
    return `${p.identifier}/${p.apiName}`;
  }
  return undefined;
}

/** W5: without a string identifier and apiName (no `"undefined/…"`), only hooks without a matcher apply. */
export function matching(hooks: readonly RegisteredHook[], event: unknown): RegisteredHook[] {
  const toolName = toolNameOf(event);
  return hooks.filter((hook) => !hook.matcher || (toolName !== undefined && hook.matcher.test(toolName)));
}

/** A hook that takes part in result control (asked for a decision). */
export function isControl(hook: RegisteredHook): boolean {
  return hook.handler ? hook.control : hook.webhook?.responseHandling === 'toolCall';
}
