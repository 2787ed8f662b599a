/** What result control decided about one tool call (W8, W9, W12), kept apart from the tool's own state (P3). */
import type { MockOutcome, ToolResult } from './agent-events.js';
import type { ControlPoint } from './hook-points.js';

export type ToolVerdict =
  | { readonly outcome: 'allowed' }
  | {
      readonly outcome: 'denied' | 'control_error';
      readonly phase: ControlPoint;
      readonly hookId: string;
      /** The text that replaces the tool result: the deny reason, or `hook_control_error`. */
      readonly reason: string;
      readonly error: 'hook_denied' | 'hook_control_error';
      /** For control errors: the failure code (`timeout`, `http_error`, `cancelled`, …). */
      readonly errorCode?: string;
    };

export type DeniedVerdict = Exclude<ToolVerdict, { outcome: 'allowed' }>;

export const ALLOWED: ToolVerdict = Object.freeze({ outcome: 'allowed' as const });

/** The text a blocking control error puts in the tool result and reason (W12). */
export const HOOK_CONTROL_ERROR = 'hook_control_error';

/** What `gateToolCall` answers: the mock (if any) and the before-controls' verdict. */
export interface ToolCallGate {
  readonly mock: MockOutcome | null;
  readonly verdict: ToolVerdict;
}

/** DESIGN §7: a hook's verdict as it is stored on the tool message, apart from the tool's own state (P3). */
export function hookVerdictState(verdict: DeniedVerdict): { hookVerdict: { outcome: DeniedVerdict['outcome']; phase: ControlPoint; reason: string } } {
  return { hookVerdict: { outcome: verdict.outcome, phase: verdict.phase, reason: verdict.reason } };
}

/** The result later hooks, the conversation and the model see instead of a denied one (W8, W9, W12). */
export function deniedToolResult(verdict: DeniedVerdict): ToolResult {
  return { content: verdict.reason, success: false, error: { type: verdict.error, message: verdict.reason }, state: hookVerdictState(verdict) };
}
