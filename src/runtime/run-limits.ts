/**
 * The limits that end an operation (SPEC F4, F5) as the terminal sequence, the error summary and the
 * operation's view name them. The limit reached is stored with the terminal transition — in the
 * operation's error message, as JSON of our own fields only (the limit's key, its configured value, an
 * offered tool's name, a configured pattern) — so whoever runs the terminal sequence, this process or a
 * reconciler after a crash, names the same limit. `token_limit` and `tool_limit` also store an error type
 * (the limit's key) and summary (DESIGN §7 `error`); `max_steps` and `cost_limit` keep their view as before.
 */
import type { LimitName, ReachedLimit, TerminalReason } from '../hooks/agent-events.js';
import type { StoredOperation } from './runtime-store.port.js';

export type LimitReason = Extract<TerminalReason, 'max_steps' | 'cost_limit' | 'token_limit' | 'tool_limit'>;

const LIMIT_REASONS: ReadonlySet<TerminalReason> = new Set<LimitReason>(['max_steps', 'cost_limit', 'token_limit', 'tool_limit']);
const LIMIT_NAMES: ReadonlySet<string> = new Set<LimitName>(['maxSteps', 'maxCostUsd', 'maxTokens', 'maxToolCalls', 'perTool', 'maxRepeatedFailures']);

/** How much of a tool name or a pattern a summary shows (the summary column holds 1,024 characters). */
const SHOWN = 200;

export function isLimitReason(reason: TerminalReason): reason is LimitReason {
  return LIMIT_REASONS.has(reason);
}

/** The terminal reason a limit ends an operation with. */
export function reasonOf(limit: ReachedLimit): LimitReason {
  switch (limit.name) {
    case 'maxSteps':
      return 'max_steps';
    case 'maxCostUsd':
      return 'cost_limit';
    case 'maxTokens':
      return 'token_limit';
    default:
      return 'tool_limit';
  }
}

/** The safe summary naming the limit (S3: our own fields only). */
export function limitSummary(limit: ReachedLimit): string {
  const tool = limit.tool !== undefined ? shown(limit.tool) : 'the call';
  switch (limit.name) {
    case 'maxSteps':
      return `the step limit maxSteps (${limit.value}) was reached`;
    case 'maxCostUsd':
      return `the cost limit maxCostUsd (${limit.value}) was reached`;
    case 'maxTokens':
      return `the token limit maxTokens (${limit.value}) was reached`;
    case 'maxToolCalls':
      return `the tool call limit maxToolCalls (${limit.value}) was reached: ${tool} did not run`;
    case 'perTool':
      return `the perTool cap ${JSON.stringify(shown(limit.pattern ?? ''))} (${limit.value}) was reached: ${tool} did not run`;
    case 'maxRepeatedFailures':
      return `${tool} failed ${limit.value} times in a row with the same arguments (maxRepeatedFailures): the next identical call did not run`;
  }
}

/**
 * What the terminal transition stores for a limit: its JSON always; an error type and summary for the
 * limits of SPEC F4/F5 that have no reason of their own to name them.
 */
export function limitRecord(limit: ReachedLimit): { type?: string; summary?: string; message: string } {
  const message = JSON.stringify({ name: limit.name, value: limit.value, ...(limit.tool !== undefined ? { tool: limit.tool } : {}), ...(limit.pattern !== undefined ? { pattern: limit.pattern } : {}) });
  const named = limit.name !== 'maxSteps' && limit.name !== 'maxCostUsd';
  return named ? { type: limit.name, summary: limitSummary(limit), message } : { message };
}

/** The limit a completed operation stored with its terminal transition, if it ended by one. */
export function storedLimit(operation: Pick<StoredOperation, 'reason' | 'errorMessage'> | null | undefined): ReachedLimit | undefined {
  if (!operation?.reason || !isLimitReason(operation.reason) || operation.errorMessage === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(operation.errorMessage);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { name, value, tool, pattern } = parsed as Record<string, unknown>;
  if (typeof name !== 'string' || !LIMIT_NAMES.has(name) || typeof value !== 'number') return undefined;
  return {
    name: name as LimitName,
    value,
    ...(typeof tool === 'string' ? { tool } : {}),
    ...(typeof pattern === 'string' ? { pattern } : {}),
  };
}

function shown(text: string): string {
  return text.length > SHOWN ? `${text.slice(0, SHOWN)}…` : text;
}
