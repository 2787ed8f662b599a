/**
 * The model port of the runtime (DESIGN §8, §12): exported, so a host may give its own provider in code
 * (`AgentHooksModule.forRoot({ models })`). Providers are stateless: everything they need is in the
 * request, so a step can run in any process after a restart.
 */
export interface ModelToolCall {
  /** Provider-assigned (or generated) id, unique within the operation. */
  id: string;
  identifier: string;
  apiName: string;
  args: Record<string, unknown>;
  /** Set when the provider's arguments were not valid JSON: `args` is `{}` and the tool is not run. */
  invalidArgs?: string;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ModelToolCall[] }
  | { role: 'tool'; content: string; toolCallId: string; identifier: string; apiName: string };

/** A tool as the model is told about it. */
export interface ModelToolSpec {
  identifier: string;
  apiName: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

export interface ChatRequest {
  messages: readonly ChatMessage[];
  tools: readonly ModelToolSpec[];
  /** The operation's prompt (scripted `{{prompt}}`). */
  prompt: string;
  /** Cancels the call (operation cancelled or deadline); the same signal as `ChatCallOptions.signal`. */
  signal?: AbortSignal;
  /**
   * How many assistant turns the operation had before this call, compacted ones included (the request's
   * messages may hold fewer after a compaction). Scripted models play the entry of this turn.
   */
  turn?: number;
  /** The published content of the operation's last tool message (scripted `{{lastToolResult}}`), compacted or not. */
  lastToolResult?: string;
  /** A compaction summary request: scripted models answer it without consuming a script entry. */
  purpose?: 'step' | 'summary';
}

export interface ChatUsage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** Why the model stopped; when a provider does not say, spans derive it from the tool calls. */
export type ChatFinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

export interface ChatResponse {
  content: string;
  toolCalls: ModelToolCall[];
  finishReason?: ChatFinishReason;
  usage: ChatUsage;
}

/** What the runtime hands a call beside its request (DESIGN §12). */
export interface ChatCallOptions {
  /** Aborts the call: the operation was cancelled or the attempt's deadline passed (K4). */
  signal?: AbortSignal;
  /**
   * Receives the answer's text as it is written (K5). The runtime does not stream yet and passes none:
   * a provider may ignore it, and must still resolve with the whole content.
   */
  onDelta?: (text: string) => void;
}

export interface ChatModel {
  /** The signal arrives both in `options` and, for providers written before `options`, in `request.signal`. */
  complete(request: ChatRequest, options?: ChatCallOptions): Promise<ChatResponse>;
  /** Releases pooled connections (HTTP providers); whoever built the model calls it at shutdown. */
  close?(): Promise<void>;
}

/** What a failed call may tell a retry (K4), beside its code and status. */
export interface ModelErrorDetails {
  /** The provider's `Retry-After`, in milliseconds from when the answer arrived. */
  retryAfterMs?: number;
  /** Tokens the provider reported for the failed call (K4: added to the usage of the answer a retry gets). */
  usage?: ChatUsage;
}

/**
 * A model call failed; `code` is safe to record, the message names provider and status, never content.
 * `summary`, when set, is what an operation view and the logs show (DESIGN §7): built by the provider from
 * our own fields only — model id, HTTP status, the name of an unset variable — never a response body.
 */
export class ModelError extends Error {
  override readonly name = 'ModelError';
  readonly retryAfterMs?: number;
  readonly usage?: ChatUsage;

  constructor(
    readonly code: 'http_error' | 'network_error' | 'timeout' | 'invalid_response' | 'cancelled' | 'configuration',
    message: string,
    readonly status?: number,
    readonly summary?: string,
    details: ModelErrorDetails = {},
  ) {
    super(message);
    if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
    if (details.usage !== undefined) this.usage = details.usage;
  }
}
