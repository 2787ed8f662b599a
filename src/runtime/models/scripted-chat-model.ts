/**
 * The offline model (DESIGN §8). Stateless by construction: the script entry to play is the request's
 * `turn` (else the number of assistant messages in the request), so any process, before or after a restart, answers the same
 * request with the same response. Past the end of the script it answers with an empty final message.
 */
import { ModelError, type ChatMessage, type ChatModel, type ChatRequest, type ChatResponse, type ModelToolCall } from './chat-model.js';
import type { ScriptEntry, ScriptedModelConfig } from './model-config.js';
import { fillTemplate, fillTemplates, type TemplateValues } from './script-template.js';
import { inputTokens, messageCharacters, tokensOf } from './token-estimate.js';

export class ScriptedChatModel implements ChatModel {
  private readonly script: readonly ScriptEntry[];
  private readonly costPerTokenUsd: number;

  constructor(config: Omit<ScriptedModelConfig, 'provider'> & { provider?: 'scripted' }) {
    if (!Array.isArray(config.script)) throw new ModelError('configuration', 'scripted model: script must be an array');
    const cost = config.costPerTokenUsd ?? 0;
    if (!Number.isFinite(cost) || cost < 0) {
      throw new ModelError('configuration', 'scripted model: costPerTokenUsd must be a non-negative number');
    }
    // A private copy: later changes to the config object cannot change what a running operation replays.
    this.script = structuredClone(config.script);
    this.costPerTokenUsd = cost;
  }

  async complete(request: ChatRequest): Promise<ChatResponse> {
    if (request.signal?.aborted) throw new ModelError('cancelled', 'scripted model call was cancelled');
    const values: TemplateValues = { prompt: request.prompt, lastToolResult: request.lastToolResult ?? lastToolResult(request.messages) };
    const assistantIndex = request.turn ?? request.messages.filter((m) => m.role === 'assistant').length;
    const { content, toolCalls } =
      request.purpose === 'summary' ? { content: summaryOf(request.messages, values), toolCalls: [] } : this.play(assistantIndex, values);
    const input = inputTokens(request.messages);
    const output = tokensOf(messageCharacters(content, toolCalls));
    return {
      content,
      toolCalls,
      usage: { inputTokens: input, outputTokens: output, costUsd: (input + output) * this.costPerTokenUsd },
    };
  }

  private play(assistantIndex: number, values: TemplateValues): { content: string; toolCalls: ModelToolCall[] } {
    const entry = this.script[assistantIndex];
    if (!entry) return { content: '', toolCalls: [] };
    const toolCalls = (entry.toolCalls ?? []).map(
      (call, i): ModelToolCall => ({
        // Deterministic and unique within the operation: one assistant message per script entry.
        id: `call_${assistantIndex}_${i}`,
        identifier: call.identifier,
        apiName: call.apiName,
        args: fillTemplates(call.args ?? {}, values) as Record<string, unknown>,
      }),
    );
    return { content: fillTemplate(entry.content ?? '', values), toolCalls };
  }
}

/** The content of the last `tool` message, '' when there is none. */
function lastToolResult(messages: readonly ChatMessage[]): string {
  const last = messages.findLast((m) => m.role === 'tool');
  return last?.content ?? '';
}

/** A compaction summary: deterministic, and it consumes no script entry (DESIGN §8). */
function summaryOf(messages: readonly ChatMessage[], values: TemplateValues): string {
  const counted = messages.filter((m) => m.role !== 'system').length;
  const lastResult = values.lastToolResult === '' ? '' : ` Last tool result: ${values.lastToolResult}`;
  return `Summary of ${counted} earlier messages. Prompt: ${values.prompt}.${lastResult}`;
}
