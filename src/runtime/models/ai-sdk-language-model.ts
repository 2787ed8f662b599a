/**
 * The part of the AI SDK's provider specification (`LanguageModelV4`, and the v3 and v2 shapes it grew from)
 * that the adapter uses, written out structurally so the package needs the AI SDK neither at run time nor
 * in its published types: a host without it loads and type-checks us unchanged, and a host with it passes
 * `anthropic('…')`, `openai.chat('…')`, `bedrock('…')`… as they are (a test pins that the SDK's own
 * `LanguageModelV4` and `LanguageModelV3` fit these types).
 *
 * Fields are the loosest the three versions agree on: v2 gives usage as plain numbers and the finish
 * reason as a string, v3 and v4 as objects.
 */

/** The provider-level model an AI SDK provider package returns (not a gateway id string). */
export interface AiSdkLanguageModel {
  readonly specificationVersion: 'v2' | 'v3' | 'v4';
  /** E.g. `openai.chat`, `anthropic.messages`. */
  readonly provider: string;
  /** E.g. `gpt-4.1`, `claude-sonnet-4-5`. */
  readonly modelId: string;
  doGenerate(options: AiSdkCallOptions): PromiseLike<AiSdkGenerateResult>;
  doStream(options: AiSdkCallOptions): PromiseLike<AiSdkStreamResult>;
}

export type AiSdkJsonValue = null | string | number | boolean | AiSdkJsonObject | AiSdkJsonValue[];
export interface AiSdkJsonObject {
  [key: string]: AiSdkJsonValue | undefined;
}

/** `providerOptions`: per provider, its own settings (e.g. `{ anthropic: { thinking: … } }`). */
export type AiSdkProviderOptions = Record<string, AiSdkJsonObject>;

export type AiSdkPromptMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: AiSdkTextPart[] }
  | { role: 'assistant'; content: (AiSdkTextPart | AiSdkToolCallPart)[] }
  | { role: 'tool'; content: AiSdkToolResultPart[] };

export interface AiSdkTextPart {
  type: 'text';
  text: string;
}

export interface AiSdkToolCallPart {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  input: unknown;
}

export interface AiSdkToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: { type: 'text'; value: string };
}

export interface AiSdkFunctionTool {
  type: 'function';
  name: string;
  description?: string;
  /** JSON Schema (draft 7) of the arguments. */
  inputSchema: Record<string, unknown>;
}

/** What the adapter sends: the prompt, the offered tools, the call's signal and the host's settings. */
export interface AiSdkCallOptions {
  prompt: AiSdkPromptMessage[];
  tools?: AiSdkFunctionTool[];
  toolChoice?: { type: 'auto' };
  abortSignal?: AbortSignal;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  seed?: number;
  stopSequences?: string[];
  headers?: Record<string, string | undefined>;
  providerOptions?: AiSdkProviderOptions;
}

/** v2: a number; v3/v4: `{ total, … }`. */
export type AiSdkTokenCount = number | { total: number | undefined } | undefined;

export interface AiSdkUsage {
  inputTokens: AiSdkTokenCount;
  outputTokens: AiSdkTokenCount;
}

/** v2: a string; v3/v4: `{ unified, raw }`. */
export type AiSdkFinishReason = string | { unified: string; raw: string | undefined };

/** One part of a generated answer or of a stream; only the fields the adapter reads. */
export interface AiSdkPart {
  type: string;
  /** `text` content. */
  text?: string;
  /** `text-delta` stream parts. */
  delta?: string;
  /** `tool-call` content and stream parts: `input` is the arguments as a JSON string. */
  toolCallId?: string;
  toolName?: string;
  input?: unknown;
  /** A tool the provider ran itself (web search, code execution…): not ours to run. */
  providerExecuted?: boolean;
  /** The `finish` stream part. */
  usage?: AiSdkUsage;
  finishReason?: AiSdkFinishReason;
  /** The `error` stream part. */
  error?: unknown;
}

export interface AiSdkGenerateResult {
  content: readonly AiSdkPart[];
  finishReason: AiSdkFinishReason;
  usage: AiSdkUsage;
}

/** A WHATWG `ReadableStream` as far as the adapter reads it. */
export interface AiSdkStreamResult {
  stream: { getReader(): AiSdkStreamReader };
}

export interface AiSdkStreamReader {
  read(): PromiseLike<{ done: boolean; value?: AiSdkPart | undefined }>;
  cancel(reason?: unknown): PromiseLike<void>;
  releaseLock(): void;
}
