/** The shapes of the public API the console reads (DESIGN §7): nothing here is internal to the server. */

export type OperationStatus = 'running' | 'waiting' | 'completed';
export type TerminalReason = 'done' | 'error' | 'interrupted' | 'max_steps' | 'cost_limit' | 'token_limit' | 'tool_limit' | 'blocked';

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export interface PendingTool {
  toolCallId: string;
  identifier: string;
  apiName: string;
  args: Record<string, unknown>;
  kind: 'approval' | 'deferred';
}

/** GET /v1/operations/:id, and the data of every `status` event. */
export interface OperationView {
  operationId: string;
  agentId: string;
  status: OperationStatus;
  reason?: TerminalReason;
  pendingTools?: PendingTool[];
  usage: Usage;
  error?: { type: string; summary: string };
}

/** One item of GET /v1/operations. */
export interface OperationSummary {
  operationId: string;
  agentId: string;
  status: OperationStatus;
  reason?: TerminalReason;
  createdAt: string;
  updatedAt: string;
  steps: number;
  usage: Usage;
}

export interface OperationPage {
  items: OperationSummary[];
  nextCursor?: string;
}

export interface HookVerdict {
  outcome: 'denied' | 'control_error';
  phase: 'beforeToolCall' | 'afterToolCall' | 'beforeModelCall' | 'afterModelCall';
  reason?: string;
}

/** A published message (GET …/messages, and the data of every `message` event). */
export interface MessageView {
  id: string;
  role: 'user' | 'assistant' | 'tool';
  content: string;
  toolCallId?: string;
  identifier?: string;
  apiName?: string;
  error?: 'hook_denied' | 'hook_control_error';
  state?: Record<string, unknown> & { hookVerdict?: HookVerdict };
}

export type HookOutcome = 'ok' | 'mocked' | 'allowed' | 'denied' | 'notification' | 'error';

export interface TimelineItem {
  seq: number;
  at: string;
  point: string;
  hookId: string;
  source: 'decorator' | 'config' | 'caller' | 'environment';
  outcome: HookOutcome;
  errorCode?: string;
  latencyMs: number;
  /** A tool point's row: its call's idempotency key (SPEC F1). */
  idempotencyKey?: string;
}

export interface ApiErrorBody {
  error: { code: string; message: string };
}
