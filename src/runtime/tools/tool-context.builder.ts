/**
 * The tool contexts of both families, each built in exactly one place:
 * - `buildToolCallHookContext` — the agent-family context shared by `beforeToolCall`, `afterToolCall` and
 *   `onToolCallError` (SPEC T1–T3), so the three events can never disagree about a call;
 * - `buildToolRequestContext` / `toolCallContext` / `toolResultContext` — the engine-family contexts, which
 *   carry safe metadata only: no arguments anywhere, result text only in `ToolResultContext` (E2, E9, S1).
 */
import type { ToolCallHookContext } from '../../hooks/agent-events.js';
import { ToolCallContext, ToolRequestContext, ToolResultContext, type ToolRequestInit } from '../../hooks/contexts.js';
import { toolCallIdempotencyKey } from './idempotency-key.js';
import type { ToolDefinition } from './tool-types.js';

/** Correlation ids of a run (T2); the runtime's values win over the origin's. */
export type ToolCorrelation = Pick<
  ToolCallHookContext,
  | 'userId'
  | 'agentId'
  | 'topicId'
  | 'sessionId'
  | 'threadId'
  | 'groupId'
  | 'taskId'
  | 'workspaceId'
  | 'documentId'
  | 'sourceMessageId'
  | 'toolMessageId'
  | 'parentOperationId'
>;

const CORRELATION_KEYS = [
  'agentId',
  'topicId',
  'sessionId',
  'threadId',
  'groupId',
  'taskId',
  'workspaceId',
  'documentId',
  'sourceMessageId',
  'toolMessageId',
  'parentOperationId',
  'userId',
] as const satisfies readonly (keyof ToolCorrelation)[];

export interface ToolCallContextInput {
  readonly toolCallId: string;
  readonly assistantMessageId: string;
  readonly identifier: string;
  readonly apiName: string;
  /** The effective arguments the tool runs with. */
  readonly args: Readonly<Record<string, unknown>>;
  readonly callIndex: number;
  readonly stepIndex: number;
  readonly operationId: string;
  /** The catalog's definition; absent for an unknown tool. */
  readonly tool?: Pick<ToolDefinition, 'source' | 'deferred'>;
  /** Overrides the route derived from the tool (`deferred` → `client`, else `server`). */
  readonly executor?: ToolCallHookContext['executor'];
  /** Overrides the source derived from the tool (e.g. `sandbox`, `builtin`). */
  readonly toolSource?: ToolCallHookContext['toolSource'];
  readonly executionTarget?: string;
  readonly activeDeviceId?: string;
  /** Correlation of the running operation (`runtime.*`). */
  readonly runtime?: ToolCorrelation;
  /** Correlation of where the operation came from (`origin.*`); used where the runtime has no value. */
  readonly origin?: ToolCorrelation;
}

/** The shared agent-family tool context (T1–T3). Frozen; `args` is a frozen deep copy the hooks cannot change. */
export function buildToolCallHookContext(input: ToolCallContextInput): ToolCallHookContext {
  const context: Record<string, unknown> = {
    toolCallId: input.toolCallId,
    assistantMessageId: input.assistantMessageId,
    identifier: input.identifier,
    apiName: input.apiName,
    args: frozenCopy(input.args),
    callIndex: input.callIndex,
    stepIndex: input.stepIndex,
    operationId: input.operationId,
    idempotencyKey: toolCallIdempotencyKey(input.operationId, input.toolCallId),
    executor: input.executor ?? (input.tool?.deferred ? 'client' : 'server'),
  };
  const toolSource = input.toolSource ?? sourceOf(input.tool);
  if (toolSource !== undefined) context.toolSource = toolSource;
  if (input.executionTarget !== undefined) context.executionTarget = input.executionTarget;
  if (input.activeDeviceId !== undefined) context.activeDeviceId = input.activeDeviceId;
  for (const key of CORRELATION_KEYS) {
    // T2: `userId = runtime.userId ?? origin.userId`; the other correlation ids follow the same rule.
    const value = input.runtime?.[key] ?? input.origin?.[key];
    if (value !== undefined) context[key] = value;
  }
  return Object.freeze(context) as unknown as ToolCallHookContext;
}

export interface ToolRequestInput {
  readonly runId: string;
  /** The call's operation: with `toolCallId`, what its idempotency key is derived from (F1). */
  readonly operationId: string;
  readonly toolCallId: string;
  readonly identifier: string;
  readonly apiName: string;
  readonly tool?: Pick<ToolDefinition, 'source' | 'serverId' | 'identifier'>;
}

/**
 * `before_tool_call`'s context: who and what, never the arguments (E2, E9), and the call's idempotency key
 * (F1), which the engine contexts after it copy. Extra input fields are ignored.
 */
export function buildToolRequestContext(input: ToolRequestInput): ToolRequestContext {
  return new ToolRequestContext({
    runId: input.runId,
    toolCallId: input.toolCallId,
    identifier: input.identifier,
    apiName: input.apiName,
    provider: providerOf(input.tool),
    idempotencyKey: toolCallIdempotencyKey(input.operationId, input.toolCallId),
  });
}

/** `after_tool_call` / `on_tool_error`: status, latency and, on error, the error's TYPE only (S3). */
export function toolCallContext(request: ToolRequestContext, status: 'ok' | 'error', latencyMs: number, errorType?: string, willRetry?: boolean): ToolCallContext {
  return new ToolCallContext({
    ...requestInit(request),
    status,
    latencyMs,
    ...(status === 'error' ? { error: { type: errorType ?? 'Error' }, willRetry: willRetry ?? false } : {}),
  });
}

/** `transform_tool_result`: the one engine context that holds result text (E2). */
export function toolResultContext(request: ToolRequestContext, result: string): ToolResultContext {
  return new ToolResultContext({ ...requestInit(request), result });
}

/** `local`, `mcp:<serverId>`, `agent`; `unknown` when the catalog does not know the tool. */
export function providerOf(tool: Pick<ToolDefinition, 'source' | 'serverId' | 'identifier'> | undefined): string {
  if (!tool) return 'unknown';
  return tool.source === 'mcp' ? `mcp:${tool.serverId ?? tool.identifier}` : tool.source;
}

function sourceOf(tool: Pick<ToolDefinition, 'source'> | undefined): ToolCallHookContext['toolSource'] {
  return tool?.source;
}

function requestInit(request: ToolRequestContext): ToolRequestInit {
  return {
    runId: request.runId,
    toolCallId: request.toolCallId,
    identifier: request.identifier,
    apiName: request.apiName,
    toolName: request.toolName,
    provider: request.provider,
    ...(request.idempotencyKey !== undefined ? { idempotencyKey: request.idempotencyKey } : {}),
  };
}

function frozenCopy(args: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  let copy: Record<string, unknown>;
  try {
    copy = structuredClone(args) as Record<string, unknown>;
  } catch {
    // Not cloneable (a function or class instance slipped in): a shallow copy still protects the call's own object.
    copy = { ...args };
  }
  return deepFreeze(copy);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value as object)) deepFreeze(child);
  }
  return value;
}
