/**
 * The model call's gates (SPEC K1, K3) share the tool call's: the dispatcher's mock phase and control phase
 * run for `beforeModelCall` / `afterModelCall` as for `beforeToolCall` / `afterToolCall`, with these
 * model-call parts — what a mock must look like, and what later hooks see once an answer was denied.
 */
import type { AfterModelCallEvent, ModelCallMock } from './model-call-events.js';
import type { DeniedVerdict, ToolVerdict } from './tool-verdict.js';

/** A `beforeModelCall` handler supplied the answer (K3): it is the model's answer for this call. */
export interface ModelMockOutcome {
  readonly isMocked: true;
  readonly response: ModelCallMock;
}

/** What `gateModelCall` answers: the mock (if any) and the controls' verdict. */
export interface ModelCallGate {
  readonly mock: ModelMockOutcome | null;
  readonly verdict: ToolVerdict;
}

/** A mock the runtime can use: string content, and tool calls that name a tool and give object arguments. */
export function acceptModelMock(value: unknown): ModelMockOutcome | null {
  if (value === null || typeof value !== 'object') return null;
  const { content, toolCalls, usage } = value as Partial<ModelCallMock>;
  if (typeof content !== 'string') return null;
  if (toolCalls !== undefined && (!Array.isArray(toolCalls) || !toolCalls.every(isMockToolCall))) return null;
  const inputTokens = countOf(usage?.inputTokens);
  const outputTokens = countOf(usage?.outputTokens);
  return {
    isMocked: true,
    response: {
      content,
      toolCalls: (toolCalls ?? []).map(({ identifier, apiName, args }) => ({ identifier, apiName, args: { ...args } })),
      usage: { inputTokens, outputTokens },
    },
  };
}

/** Later hooks of `afterModelCall` observe the answer that replaces a denied one, never the denied one (K3). */
export function deniedModelView(event: AfterModelCallEvent, verdict: DeniedVerdict): AfterModelCallEvent {
  return { ...event, response: { ...event.response, content: verdict.reason, toolCalls: [] } };
}

function isMockToolCall(call: unknown): boolean {
  if (call === null || typeof call !== 'object') return false;
  const { identifier, apiName, args } = call as { identifier?: unknown; apiName?: unknown; args?: unknown };
  return typeof identifier === 'string' && typeof apiName === 'string' && args !== null && typeof args === 'object' && !Array.isArray(args);
}

function countOf(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0;
}
