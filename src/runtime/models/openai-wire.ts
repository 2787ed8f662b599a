/**
 * The Chat Completions wire format (tool calling) and our model port, mapped both ways. Pure functions:
 * the HTTP exchange lives in `openai-chat-model.ts`. A response that does not have the documented shape is
 * `invalid_response`; a tool call whose `arguments` are not a JSON object is still returned, with `args: {}`
 * and `invalidArgs` saying why, so the runtime can show the model an error result instead of failing the
 * step (the model can then correct itself).
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ChatMessage, ChatRequest, ModelToolCall, ModelToolSpec } from './chat-model.js';
import { encodeToolName, type ToolNameTable } from './openai-tool-names.js';

export type WireMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[] }
  | { role: 'tool'; content: string; tool_call_id: string };

export interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface WireTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface WireRequest {
  model: string;
  messages: WireMessage[];
  tools?: WireTool[];
  /** K5: asked only when the call streams; the usage then comes in the final chunk. */
  stream?: true;
  stream_options?: { include_usage: true };
}

export function toWireRequest(model: string, request: ChatRequest, stream = false): WireRequest {
  const body: WireRequest = { model, messages: request.messages.map(toWireMessage) };
  // The API rejects an empty `tools` array; no tools means no field.
  if (request.tools.length > 0) body.tools = request.tools.map(toWireTool);
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

function toWireMessage(message: ChatMessage): WireMessage {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'tool':
      return { role: 'tool', content: message.content, tool_call_id: message.toolCallId };
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        // With tool calls the API expects `null` rather than an empty string.
        content: message.content === '' ? null : message.content,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: 'function',
          // A call whose arguments were invalid is replayed with the `{}` it was given.
          function: { name: encodeToolName(call), arguments: JSON.stringify(call.args) },
        })),
      };
    }
  }
}

function toWireTool(tool: ModelToolSpec): WireTool {
  const parameters = Object.keys(tool.parameters).length > 0 ? tool.parameters : { type: 'object', properties: {} };
  return { type: 'function', function: { name: encodeToolName(tool), description: tool.description, parameters } };
}

const wireResponseSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z
            .array(
              z.object({
                id: z.string().nullish(),
                type: z.literal('function').nullish(),
                function: z.object({ name: z.string().min(1), arguments: z.unknown().optional() }),
              }),
            )
            .nullish(),
        }),
      }),
    )
    .min(1),
  usage: z
    .object({ prompt_tokens: z.unknown().optional(), completion_tokens: z.unknown().optional() })
    .nullish(),
});

export interface WireAnswer {
  content: string;
  toolCalls: ModelToolCall[];
  promptTokens: number;
  completionTokens: number;
}

/** `undefined` when the body is not a Chat Completions response; the caller raises `invalid_response`. */
export function fromWireResponse(body: unknown, names: ToolNameTable): WireAnswer | undefined {
  const parsed = wireResponseSchema.safeParse(body);
  if (!parsed.success) return undefined;
  const { message } = parsed.data.choices[0]!;
  const toolCalls = (message.tool_calls ?? []).map((call): ModelToolCall => {
    const { identifier, apiName } = names.decode(call.function.name);
    const args = parseArguments(call.function.arguments);
    return {
      // The runtime needs an id to pair the result with the call; a server that sends none gets one.
      id: call.id || `call_${randomUUID()}`,
      identifier,
      apiName,
      ...args,
    };
  });
  return {
    content: message.content ?? '',
    toolCalls,
    promptTokens: tokenCount(parsed.data.usage?.prompt_tokens),
    completionTokens: tokenCount(parsed.data.usage?.completion_tokens),
  };
}

/**
 * Arguments arrive as a JSON string; some compatible servers send the object itself. Shared with the AI SDK
 * adapter, whose tool calls carry the same JSON string.
 */
export function parseArguments(raw: unknown): { args: Record<string, unknown>; invalidArgs?: string } {
  if (raw === undefined || raw === null) return { args: {} };
  let value: unknown = raw;
  if (typeof raw === 'string') {
    if (raw.trim() === '') return { args: {} };
    try {
      value = JSON.parse(raw);
    } catch {
      // The parser's message quotes the input; the reason alone is enough for the model to retry.
      return { args: {}, invalidArgs: 'the arguments are not valid JSON' };
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { args: {}, invalidArgs: 'the arguments must be a JSON object' };
  }
  return { args: value as Record<string, unknown> };
}

function tokenCount(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}
