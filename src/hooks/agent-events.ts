/**
 * Agent-family event payloads (SPEC V, T1–T5; DESIGN §6 common event fields).
 * Plain data: these are what handlers receive and what webhooks serialize.
 */

/** Why an operation reached its terminal state (SPEC V, onComplete; `blocked`: a model-call control denied, K3). */
export type TerminalReason = 'done' | 'error' | 'interrupted' | 'max_steps' | 'cost_limit' | 'token_limit' | 'tool_limit' | 'blocked';


/** An agent's `limits:` key that can end an operation (SPEC F4, F5). */
export type LimitName = 'maxSteps' | 'maxCostUsd' | 'maxTokens' | 'maxToolCalls' | 'perTool' | 'maxRepeatedFailures';

/**
 * The limit that ended an operation (SPEC F4, F5): its key, its configured value, and for tool limits the
 * tool whose call did not run (`identifier/apiName`) and, for `perTool`, the pattern whose cap it hit.
 */
export interface ReachedLimit {
  readonly name: LimitName;
  readonly value: number;
  readonly tool?: string;
  readonly pattern?: string;
}

/** Fields every agent-family event carries (DESIGN §6). */
export interface AgentEventBase {
  /** Unique id of this event (also the id an email-only projection keeps, B3). */
  readonly id: string;
  readonly type: string;
  readonly operationId: string;
  readonly agentId: string;
  readonly userId?: string;
  readonly stepIndex: number;
  /** ISO-8601 time the event was built. */
  readonly timestamp: string;
  readonly parentOperationId?: string;
  readonly threadId?: string;
  readonly topicId?: string;
}

/** A tool's result as the runtime and hooks see it (SPEC T4, DESIGN §6). */
export interface ToolResult {
  content: string;
  success: boolean;
  executionTime?: number;
  error?: { type?: string; message?: string; code?: string };
  /** The tool's own state (e.g. `{ type: 'blocked' }`); never a hook verdict (P3). */
  state?: Record<string, unknown>;
  /** Structured, possibly large data; dropped from notification payloads (B2). */
  data?: unknown;
}

/** Usage totals of an operation so far. */
export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** The shared tool context of the three tool events (SPEC T1–T3), built by one function in the runtime. */
export interface ToolCallHookContext {
  readonly toolCallId: string;
  readonly assistantMessageId: string;
  readonly identifier: string;
  readonly apiName: string;
  /** The effective arguments the tool runs with. */
  readonly args: Record<string, unknown>;
  readonly callIndex: number;
  readonly stepIndex: number;
  readonly operationId: string;
  /**
   * F1: the call's idempotency key, the same on every attempt, re-run, takeover and process. Always set on
   * the events the runtime dispatches; optional in the type so events built by hand (tests) stay valid.
   */
  readonly idempotencyKey?: string;
  /** The dispatch route: run by this server, or handed to a client (deferred). */
  readonly executor: 'server' | 'client';
  /** Where the tool comes from (T3). */
  readonly toolSource?: 'builtin' | 'local' | 'mcp' | 'sandbox' | 'agent' | 'client';
  readonly executionTarget?: string;
  readonly activeDeviceId?: string;
  readonly agentId?: string;
  readonly topicId?: string;
  readonly sessionId?: string;
  readonly threadId?: string;
  readonly groupId?: string;
  readonly taskId?: string;
  readonly workspaceId?: string;
  readonly documentId?: string;
  readonly sourceMessageId?: string;
  readonly toolMessageId?: string;
  readonly parentOperationId?: string;
  /** `runtime.userId ?? origin.userId` (T2). */
  readonly userId?: string;
}

export interface ToolCallSummary {
  toolCallId: string;
  identifier: string;
  apiName: string;
}

export interface ToolResultSummary {
  toolCallId: string;
  success: boolean;
  error?: 'hook_denied' | 'hook_control_error';
}

export interface PendingTool {
  toolCallId: string;
  /** F1: the key the outside executor (or the approved run) uses to deduplicate the call's effect; always set by the runtime. */
  idempotencyKey?: string;
  identifier: string;
  apiName: string;
  args: Record<string, unknown>;
  kind: 'approval' | 'deferred';
}

export type BeforeStepEvent = AgentEventBase & { readonly type: 'beforeStep' };

export type AfterStepEvent = AgentEventBase & {
  readonly type: 'afterStep';
  readonly content: string;
  readonly toolCalls: readonly ToolCallSummary[];
  readonly toolResults: readonly ToolResultSummary[];
  readonly usage: UsageTotals;
};

export type OnCompleteEvent = AgentEventBase & {
  readonly type: 'onComplete';
  readonly reason: TerminalReason;
  /** For a limit's reason (`max_steps`, `cost_limit`, `token_limit`, `tool_limit`): the limit reached (SPEC F4, F5). */
  readonly limit?: ReachedLimit;
};

export type OnErrorEvent = AgentEventBase & {
  readonly type: 'onError';
  readonly errorMessage: string;
  readonly errorDetail?: string;
  readonly errorType?: string;
  readonly errorCode?: string;
};

type ToolEventBase = AgentEventBase & ToolCallHookContext;

/** `beforeToolCall` as serialized for webhooks and observers: no callbacks (M2). */
export type BeforeToolCallObservationEvent = ToolEventBase & { readonly type: 'beforeToolCall' };

/** `beforeToolCall` as in-memory handlers receive it: with `mock()` (M1). */
export type BeforeToolCallEvent = BeforeToolCallObservationEvent & {
  /** Supplies the tool's result instead of running it; returns whether this mock was accepted. */
  mock(result: ToolResult): boolean;
};

export type AfterToolCallEvent = ToolEventBase & {
  readonly type: 'afterToolCall';
  readonly result: ToolResult;
  /** The result was supplied by a local mock (T4). */
  readonly mocked: boolean;
  /** The tool's final state; local handlers only, never serialized (B2). */
  readonly finalState?: unknown;
};

export type OnToolCallErrorEvent = ToolEventBase & {
  readonly type: 'onToolCallError';
  readonly error: { type: string; message: string; code?: string };
  /** F3: this failed attempt is followed by another one (same key) after a backoff; always set by the runtime. */
  readonly willRetry?: boolean;
  /** F3: which attempt failed, from 1. */
  readonly attempt?: number;
};

export type BeforeHumanInterventionEvent = AgentEventBase & {
  readonly type: 'beforeHumanIntervention';
  readonly pendingTools: readonly PendingTool[];
};

export type AfterHumanInterventionEvent = AgentEventBase & {
  readonly type: 'afterHumanIntervention';
  readonly action: 'approve' | 'reject' | 'rejectAndContinue';
  readonly toolCallId?: string;
  readonly rejectionReason?: string;
  /** SPEC F6: the approval carried new arguments, which the call runs with. */
  readonly argsEdited?: true;
};

export type OnStopByHumanInterventionEvent = AgentEventBase & {
  readonly type: 'onStopByHumanIntervention';
  readonly toolCallId?: string;
  readonly rejectionReason?: string;
};

export type BeforeCompactEvent = AgentEventBase & {
  readonly type: 'beforeCompact';
  readonly messageCount: number;
  readonly tokenCount: number;
};

export type AfterCompactEvent = AgentEventBase & {
  readonly type: 'afterCompact';
  readonly groupId: string;
  readonly messagesBefore: number;
  readonly messagesAfter: number;
  readonly summary: string;
};

export type OnCompactErrorEvent = AgentEventBase & {
  readonly type: 'onCompactError';
  readonly error: { type: string; message: string };
  readonly tokenCount: number;
};

/**
 * CallAgent events are dispatched on the parent operation (V1). Their `agentId` is the called
 * sub-agent, as SPEC V lists it; the parent's agent is `parentAgentId`.
 */
type CallAgentBase = Omit<AgentEventBase, 'agentId'> & {
  readonly agentId: string;
  readonly parentAgentId: string;
  /** The parent's `agents/call` tool call. */
  readonly toolCallId?: string;
};

export type BeforeCallAgentEvent = CallAgentBase & { readonly type: 'beforeCallAgent'; readonly instruction: string };

export type AfterCallAgentEvent = CallAgentBase & {
  readonly type: 'afterCallAgent';
  readonly subOperationId?: string;
  readonly success: boolean;
  readonly threadId?: string;
};

export type OnCallAgentErrorEvent = CallAgentBase & {
  readonly type: 'onCallAgentError';
  readonly error: { type: string; message: string };
};

/** What `dispatchBeforeToolCall` answers when a handler mocked the call (M1). */
export interface MockOutcome {
  isMocked: true;
  result: ToolResult;
}
