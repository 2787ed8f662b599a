/** Turns whatever a `@Tool` method returned into a `ToolResult` (DESIGN §6). */
import type { ToolResult } from '../../hooks/agent-events.js';

/**
 * - a string → `{ content, success: true }`;
 * - `{ content: string, success?, data?, state? }` → that result (`success` defaults to `true`);
 * - anything else (numbers, arrays, other objects) → its JSON text as the content; `undefined` → `''`.
 */
export function toToolResult(value: unknown): ToolResult {
  if (typeof value === 'string') return { content: value, success: true };
  if (isResultLike(value)) {
    return {
      content: value.content,
      success: typeof value.success === 'boolean' ? value.success : true,
      ...(value.data !== undefined ? { data: value.data } : {}),
      ...(isRecord(value.state) ? { state: value.state } : {}),
    };
  }
  if (value === undefined) return { content: '', success: true };
  return { content: JSON.stringify(value) ?? '', success: true };
}

function isResultLike(value: unknown): value is { content: string; success?: unknown; data?: unknown; state?: unknown } {
  return isRecord(value) && typeof value.content === 'string';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
