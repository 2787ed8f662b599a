/**
 * Our model port and the AI SDK's provider specification, mapped both ways. Pure functions: the calls
 * live in `ai-sdk-chat-model.ts`. Tool names are encoded as for Chat Completions (`identifier__apiName`,
 * hashed when that breaks `^[a-zA-Z0-9_-]{1,64}$`), the strictest rule the SDK's providers share, and
 * decoded through the request's own tool list.
 */
import { randomUUID } from 'node:crypto';
import type { ChatFinishReason, ChatMessage, ChatRequest, ModelToolCall } from './chat-model.js';
import type { AiSdkFinishReason, AiSdkFunctionTool, AiSdkPart, AiSdkPromptMessage, AiSdkTokenCount, AiSdkUsage } from './ai-sdk-language-model.js';
import { encodeToolName, type ToolNameTable } from './openai-tool-names.js';
import { parseArguments } from './openai-wire.js';

export function toAiSdkPrompt(messages: ChatRequest['messages']): AiSdkPromptMessage[] {
  return messages.map(toAiSdkMessage);
}

function toAiSdkMessage(message: ChatMessage): AiSdkPromptMessage {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: [{ type: 'text', text: message.content }] };
    case 'tool':
      return {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: message.toolCallId, toolName: encodeToolName(message), output: { type: 'text', value: message.content } }],
      };
    case 'assistant': {
      // Providers refuse an empty text part; an answer that only called tools has none.
      const text = message.content === '' ? [] : [{ type: 'text' as const, text: message.content }];
      const calls = (message.toolCalls ?? []).map((call) => ({ type: 'tool-call' as const, toolCallId: call.id, toolName: encodeToolName(call), input: call.args }));
      return { role: 'assistant', content: [...text, ...calls] };
    }
  }
}

export function toAiSdkTools(tools: ChatRequest['tools']): AiSdkFunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    name: encodeToolName(tool),
    description: tool.description,
    // Providers want an object schema even for a tool without arguments.
    inputSchema: Object.keys(tool.parameters).length > 0 ? tool.parameters : { type: 'object', properties: {} },
  }));
}

/**
 * A tool call the model asked for, with its arguments parsed as the OpenAI client parses them: arguments
 * that are not a JSON object give `args: {}` and `invalidArgs`, so the model is told instead of the step
 * failing. `undefined` for a call the provider ran itself.
 */
export function toModelToolCall(part: AiSdkPart, names: ToolNameTable): ModelToolCall | undefined {
  if (part.type !== 'tool-call' || part.providerExecuted === true || typeof part.toolName !== 'string') return undefined;
  const { identifier, apiName } = names.decode(part.toolName);
  return { id: part.toolCallId || `call_${randomUUID()}`, identifier, apiName, ...parseArguments(part.input) };
}

const FINISH_REASONS: Readonly<Record<string, ChatFinishReason>> = {
  stop: 'stop',
  length: 'length',
  'content-filter': 'content_filter',
  'tool-calls': 'tool_calls',
};

/** The SDK's unified reason in our words; `error`, `interrupted`, `other` and unknown ones are `other`. */
export function toFinishReason(reason: AiSdkFinishReason | undefined): ChatFinishReason {
  const unified = typeof reason === 'string' ? reason : reason?.unified;
  return (unified !== undefined && FINISH_REASONS[unified]) || 'other';
}

export function tokenCounts(usage: AiSdkUsage | undefined): { inputTokens: number; outputTokens: number } {
  return { inputTokens: tokens(usage?.inputTokens), outputTokens: tokens(usage?.outputTokens) };
}

function tokens(count: AiSdkTokenCount): number {
  const value = typeof count === 'object' && count !== null ? count.total : count;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}
