/**
 * The budgets of SPEC F4 and the loop guard of F5, derived from what the operation committed — its usage
 * totals and its conversation — never from counters in memory: after a restart or a takeover by another
 * process, the same committed state gives the same answer, so a call refused once is refused again and a
 * call that passed passes again (an interrupted call was not counted: it has no published result yet).
 *
 * What counts as a tool call: every call of the operation's assistant messages that was offered (G1 — a
 * call refused as `tool_not_available` never entered the chain), in order, up to the call being decided.
 * A call whose result is still out (a deferred call, a child) counts; it was handed out.
 */
import type { ReachedLimit } from '../hooks/agent-events.js';
import type { AgentLimits } from './agent-directory.port.js';
import { canonicalArgs } from './canonical-args.js';
import type { ModelToolCall } from './models/chat-model.js';
import type { StoredMessage, StoredOperation } from './runtime-store.port.js';
import type { ToolOffer } from './tools/tool-types.js';
import type { ToolPattern } from './tools/tool-pattern.js';
import { TOOL_NOT_AVAILABLE } from './tools/unavailable-tool.js';

/** The limits checked before a step's model call: steps, cost, tokens (F4). */
export function stepLimitReached(limits: AgentLimits, operation: Pick<StoredOperation, 'stepIndex' | 'usage'>): ReachedLimit | undefined {
  const { usage } = operation;
  if (operation.stepIndex >= limits.maxSteps) return { name: 'maxSteps', value: limits.maxSteps };
  if (limits.maxCostUsd !== undefined && usage.costUsd >= limits.maxCostUsd) return { name: 'maxCostUsd', value: limits.maxCostUsd };
  // Input and output tokens summed over every model call of the operation (its steps and its compactions).
  if (limits.maxTokens !== undefined && usage.inputTokens + usage.outputTokens >= limits.maxTokens) return { name: 'maxTokens', value: limits.maxTokens };
  return undefined;
}

/** One earlier call of the operation, and what became of it. */
interface PastCall {
  readonly call: ModelToolCall;
  readonly name: string;
  readonly outcome: 'pending' | 'succeeded' | 'failed';
}

export interface CallBudgetInput {
  readonly limits: AgentLimits;
  readonly offer: ToolOffer;
  /** The conversation as committed, in order (the step's `messages`). */
  readonly messages: readonly StoredMessage[];
  /** The assistant message whose call `callIndex` is being decided. */
  readonly assistantId: string;
  readonly callIndex: number;
  readonly call: ModelToolCall;
}

/**
 * The limit the call would go over, if any: `maxToolCalls`, a `perTool` cap, or F5's repeated failures.
 * Checked before anything of the call happens — no approval asked, no hook run, nothing executed.
 */
export function callLimitReached(input: CallBudgetInput): ReachedLimit | undefined {
  const { limits, offer, call } = input;
  const name = `${call.identifier}/${call.apiName}`;
  const past = pastCalls(input);
  if (limits.maxToolCalls !== undefined && past.length >= limits.maxToolCalls) return { name: 'maxToolCalls', value: limits.maxToolCalls, tool: name };
  for (const cap of limits.perTool ?? []) {
    if (!selects(cap.pattern, call, offer)) continue;
    if (past.filter((earlier) => selects(cap.pattern, earlier.call, offer)).length >= cap.max) return { name: 'perTool', value: cap.max, tool: name, pattern: cap.pattern.source };
  }
  if (repeatedFailures(past, call, name) >= limits.maxRepeatedFailures) return { name: 'maxRepeatedFailures', value: limits.maxRepeatedFailures, tool: name };
  return undefined;
}

/** F5: how many identical calls (same tool, same canonical arguments) failed in a row just before this one. */
function repeatedFailures(past: readonly PastCall[], call: ModelToolCall, name: string): number {
  let signature: string | undefined;
  let failures = 0;
  for (let i = past.length - 1; i >= 0; i--) {
    const earlier = past[i]!;
    if (earlier.name !== name) continue;
    signature ??= signatureOf(call);
    if (signatureOf(earlier.call) !== signature) continue;
    if (earlier.outcome !== 'failed') break;
    failures++;
  }
  return failures;
}

/** Key order ignored; arguments that were not JSON are compared as sent. */
function signatureOf(call: ModelToolCall): string {
  return call.invalidArgs !== undefined ? `invalid:${call.invalidArgs}` : canonicalArgs(call.args);
}

/** The offered calls before `callIndex` of `assistantId`, in order, with their outcomes. */
function pastCalls({ messages, assistantId, callIndex }: CallBudgetInput): PastCall[] {
  const results = new Map<string, StoredMessage>();
  for (const message of messages) if (message.role === 'tool' && message.toolCallId !== undefined) results.set(message.toolCallId, message);
  const past: PastCall[] = [];
  for (const message of messages) {
    if (message.role !== 'assistant' || !message.toolCalls) continue;
    const calls = message.id === assistantId ? message.toolCalls.slice(0, callIndex) : message.toolCalls;
    for (const call of calls) {
      const result = results.get(call.id);
      if (result && (result.state as { error?: { type?: unknown } } | undefined)?.error?.type === TOOL_NOT_AVAILABLE) continue;
      past.push({ call, name: `${call.identifier}/${call.apiName}`, outcome: result === undefined ? 'pending' : succeeded(result) ? 'succeeded' : 'failed' });
    }
    if (message.id === assistantId) break;
  }
  return past;
}

/** A published result's outcome; rows written before it was stored fall back to the content. */
function succeeded(result: StoredMessage): boolean {
  return result.success ?? (!result.error && !result.content.startsWith('Error: '));
}

/** The one tool matcher (`tools:` entries): a glob over `identifier/apiName`, or every tool of an MCP server. */
function selects(pattern: ToolPattern, call: ModelToolCall, offer: ToolOffer): boolean {
  if (pattern.kind === 'glob') return pattern.matches(`${call.identifier}/${call.apiName}`);
  const tool = offer.get(call.identifier, call.apiName);
  return tool?.source === 'mcp' && tool.serverId === pattern.serverId;
}
