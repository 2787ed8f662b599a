/**
 * DESIGN §12: any AI SDK provider as our `ChatModel` — `aiSdkChatModel(anthropic('claude-sonnet-4-5'))`, then
 * `AgentHooksModule.forRoot({ models: { main } })` and `{ provider: code, name: main }` in agents.yaml. The
 * adapter calls the provider-level model (`doGenerate`, or `doStream` when the runtime takes deltas, K5)
 * with no retries of its own: retries, fallbacks and deadlines stay the runtime's (K4), which reads the
 * HTTP status and `Retry-After` of a failure from the `ModelError` it gets. Needs nothing of the SDK at run
 * time: the host brings the model, and with it the SDK.
 */
import { ModelError, type ChatCallOptions, type ChatModel, type ChatRequest, type ChatResponse, type ChatUsage, type ModelToolCall } from './chat-model.js';
import type { AiSdkCallOptions, AiSdkFinishReason, AiSdkLanguageModel, AiSdkPart, AiSdkStreamReader, AiSdkUsage } from './ai-sdk-language-model.js';
import { cancelledCall, streamedError, toModelError, type AiSdkCallSite } from './ai-sdk-errors.js';
import { toAiSdkPrompt, toAiSdkTools, toFinishReason, toModelToolCall, tokenCounts } from './ai-sdk-prompt.js';
import { ToolNameTable } from './openai-tool-names.js';

/** Settings sent with every call, as the SDK's provider specification names them. */
export type AiSdkCallSettings = Pick<AiSdkCallOptions, 'maxOutputTokens' | 'temperature' | 'topP' | 'seed' | 'stopSequences' | 'headers' | 'providerOptions'>;

export interface AiSdkChatModelOptions {
  /** USD per input token, for `usage.costUsd` and `maxCostUsd`; default 0 (providers report tokens, not prices). */
  costPerInputTokenUsd?: number;
  /** USD per output token; default 0. */
  costPerOutputTokenUsd?: number;
  settings?: AiSdkCallSettings;
}

const VERSIONS: ReadonlySet<string> = new Set(['v2', 'v3', 'v4']);

/**
 * Wraps an AI SDK `LanguageModel` (specification v4, and v3/v2 models of earlier SDK majors). A gateway
 * model id string is not a model: pass the provider's model object. Wrong input is a `configuration` error.
 */
export function aiSdkChatModel(model: AiSdkLanguageModel, options: AiSdkChatModelOptions = {}): ChatModel {
  if (typeof model === 'string') throw new ModelError('configuration', 'aiSdkChatModel: pass a provider model object (e.g. openai("gpt-4.1")), not a model id string');
  const candidate = model as Partial<AiSdkLanguageModel> | null;
  if (candidate === null || typeof candidate !== 'object' || typeof candidate.doGenerate !== 'function' || typeof candidate.doStream !== 'function') {
    throw new ModelError('configuration', 'aiSdkChatModel: the value is not an AI SDK language model (no doGenerate/doStream)');
  }
  if (!VERSIONS.has(String(candidate.specificationVersion))) {
    throw new ModelError('configuration', 'aiSdkChatModel: the model implements an unsupported AI SDK specification version (v2, v3 and v4 are supported)');
  }
  for (const key of ['costPerInputTokenUsd', 'costPerOutputTokenUsd'] as const) {
    const value = options[key];
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) throw new ModelError('configuration', `aiSdkChatModel: ${key} must be a non-negative number`);
  }
  return new AiSdkChatModel(model, options);
}

class AiSdkChatModel implements ChatModel {
  private readonly site: AiSdkCallSite;

  constructor(
    private readonly model: AiSdkLanguageModel,
    private readonly options: AiSdkChatModelOptions,
  ) {
    this.site = { modelId: String(model.modelId), provider: String(model.provider) };
  }

  complete(request: ChatRequest, options: ChatCallOptions = {}): Promise<ChatResponse> {
    const signal = options.signal ?? request.signal;
    if (signal?.aborted) return Promise.reject(cancelledCall(this.site));
    const names = new ToolNameTable(request.tools);
    const call: AiSdkCallOptions = {
      ...this.options.settings,
      prompt: toAiSdkPrompt(request.messages),
      // No tools means no field: some providers refuse an empty list.
      ...(request.tools.length > 0 ? { tools: toAiSdkTools(request.tools) } : {}),
      ...(signal ? { abortSignal: signal } : {}),
    };
    return options.onDelta ? this.streamed(call, names, signal, options.onDelta) : this.generated(call, names, signal);
  }

  private async generated(call: AiSdkCallOptions, names: ToolNameTable, signal: AbortSignal | undefined): Promise<ChatResponse> {
    let result;
    try {
      result = await untilAborted(this.model.doGenerate(call), signal, this.site);
    } catch (error) {
      throw toModelError(error, this.site, signal);
    }
    const content = (result.content ?? []).filter((part) => part.type === 'text' && typeof part.text === 'string').map((part) => part.text).join('');
    const toolCalls = (result.content ?? []).map((part) => toModelToolCall(part, names)).filter((c): c is ModelToolCall => c !== undefined);
    return this.answer(content, toolCalls, result.finishReason, result.usage);
  }

  /** K5: each text delta goes to `onDelta` as it arrives; the deltas concatenate to the content. */
  private async streamed(call: AiSdkCallOptions, names: ToolNameTable, signal: AbortSignal | undefined, onDelta: (text: string) => void): Promise<ChatResponse> {
    let reader: AiSdkStreamReader;
    try {
      reader = (await untilAborted(this.model.doStream(call), signal, this.site)).stream.getReader();
    } catch (error) {
      throw toModelError(error, this.site, signal);
    }
    // A provider that ignores its signal still stops being read: a cancelled reader ends the pending read.
    const stop = (): void => void Promise.resolve(reader.cancel()).catch(() => undefined);
    signal?.addEventListener('abort', stop, { once: true });
    // Aborted between the stream's opening and the listener: no event will come, so stop now.
    if (signal?.aborted) stop();
    let content = '';
    const toolCalls: ModelToolCall[] = [];
    let finishReason: AiSdkFinishReason | undefined;
    let usage: AiSdkUsage | undefined;
    let ended = false;
    try {
      for (;;) {
        let next: { done: boolean; value?: AiSdkPart | undefined };
        try {
          next = await reader.read();
        } catch (error) {
          throw toModelError(error, this.site, signal, true);
        }
        if (signal?.aborted) throw cancelledCall(this.site);
        if (next.done) break;
        const part = next.value;
        if (!part) continue;
        if (part.type === 'text-delta') {
          if (typeof part.delta === 'string' && part.delta !== '') {
            content += part.delta;
            onDelta(part.delta);
          }
        } else if (part.type === 'tool-call') {
          const toolCall = toModelToolCall(part, names);
          if (toolCall) toolCalls.push(toolCall);
        } else if (part.type === 'finish') {
          finishReason = part.finishReason;
          usage = part.usage;
        } else if (part.type === 'error') {
          throw streamedError(part.error, this.site, signal);
        }
      }
      ended = true;
    } finally {
      signal?.removeEventListener('abort', stop);
      // An answer given up half-way releases its connection.
      if (!ended) stop();
      try {
        reader.releaseLock();
      } catch {
        // A reader already released or errored has no lock to give back.
      }
    }
    return this.answer(content, toolCalls, finishReason, usage);
  }

  private answer(content: string, toolCalls: ModelToolCall[], finishReason: AiSdkFinishReason | undefined, usage: AiSdkUsage | undefined): ChatResponse {
    return { content, toolCalls, finishReason: toFinishReason(finishReason), usage: this.cost(tokenCounts(usage)) };
  }

  private cost({ inputTokens, outputTokens }: { inputTokens: number; outputTokens: number }): ChatUsage {
    const costUsd = inputTokens * (this.options.costPerInputTokenUsd ?? 0) + outputTokens * (this.options.costPerOutputTokenUsd ?? 0);
    return { inputTokens, outputTokens, costUsd };
  }
}

/** The provider's promise, or a `cancelled` rejection as soon as the signal aborts (a provider may ignore it). */
function untilAborted<T>(pending: PromiseLike<T>, signal: AbortSignal | undefined, site: AiSdkCallSite): Promise<T> {
  const answered = Promise.resolve(pending);
  if (!signal) return answered;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(cancelledCall(site));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  // The loser of the race settles unobserved; the winner decided the outcome.
  answered.catch(() => undefined);
  aborted.catch(() => undefined);
  return Promise.race([answered, aborted]).finally(() => signal.removeEventListener('abort', onAbort!));
}
