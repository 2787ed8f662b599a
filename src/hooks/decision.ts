/**
 * Decision rules shared by webhook response bodies and in-process handler returns (W8, W11–W14).
 */
import type { ControlPoint } from './hook-points.js';

export type DecisionReading =
  | { kind: 'allow' }
  | { kind: 'deny'; reason: string }
  /** No top-level decision: a notification, even under `onError: 'block'` (W11). */
  | { kind: 'notification' }
  /** An explicit but invalid decision: a control error (W12). */
  | { kind: 'invalid' };

export function defaultDenyReason(point: ControlPoint): string {
  return `Blocked by ${point} hook.`;
}

/**
 * Reads a parsed response body or handler return value. Not an object, or no own top-level `decision`
 * (`{}`, arrays, `null`, scalars, a legacy `hookSpecificOutput`) → notification (W11). `allow` / `deny`
 * with an optional string reason → a decision; every other field is dropped (W13). Any other `decision`
 * value, or a non-string reason → invalid (a control error, W12).
 */
export function readDecision(value: unknown, point: ControlPoint): DecisionReading {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { kind: 'notification' };
  if (!Object.prototype.hasOwnProperty.call(value, 'decision')) return { kind: 'notification' };
  const { decision, reason } = value as { decision: unknown; reason?: unknown };
  if (decision === 'allow') return { kind: 'allow' };
  if (decision === 'deny') {
    // A reason, when present, must be a string (W13); omitted or empty uses the default (W8).
    if (reason !== undefined && typeof reason !== 'string') return { kind: 'invalid' };
    return { kind: 'deny', reason: reason !== undefined && reason.trim().length > 0 ? reason : defaultDenyReason(point) };
  }
  return { kind: 'invalid' };
}
