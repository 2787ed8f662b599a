/**
 * Decision rules shared by webhook response bodies and in-process handler returns (W8, W11–W14).
 */
import type { ToolControlPoint } from './hook-points.js';

export type DecisionReading =
  | { kind: 'allow' }
  | { kind: 'deny'; reason: string }
  /** No top-level decision: a notification, even under `onError: 'block'` (W11). */
  | { kind: 'notification' }
  /** An explicit but invalid decision: a control error (W12). */
  | { kind: 'invalid' };

export function defaultDenyReason(point: ToolControlPoint): string {
  return `Blocked by ${point} hook.`;
}

/**
 * Reads a parsed response body or handler return value. Only `decision` and, on deny, a string `reason`
 * are used; every other field is dropped (W13).
 */
export function readDecision(value: unknown, point: ToolControlPoint): DecisionReading {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { kind: 'notification' };
  if (!Object.prototype.hasOwnProperty.call(value, 'decision')) return { kind: 'notification' };
  const { decision, reason } = value as { decision: unknown; reason?: unknown };
  if (decision === 'allow') return { kind: 'allow' };
  if (decision === 'deny') {
    // A reason that is not a non-empty string is dropped, never the deny itself (W8, W13).
    const usable = typeof reason === 'string' && reason.trim().length > 0;
    return { kind: 'deny', reason: usable ? reason : defaultDenyReason(point) };
  }
  return { kind: 'invalid' };
}
