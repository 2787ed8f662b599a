/**
 * The model request as model-call hooks see it (DESIGN §12 shapes) and back (SPEC K2): hooks get
 * `{ role, content, toolCalls?, toolCallId? }` and `identifier/apiName` tool names; what a transform
 * returns becomes the request the model is sent.
 */
import type { ModelCallMessage, ModelCallResponse, ModelCallToolCall } from '../hooks/model-call-events.js';
import type { ChatMessage, ChatRequest, ChatResponse, ModelToolCall } from './models/chat-model.js';

export function toolNameOf(tool: { identifier: string; apiName: string }): string {
  return `${tool.identifier}/${tool.apiName}`;
}

export function hookMessages(messages: readonly ChatMessage[]): ModelCallMessage[] {
  return messages.map((message) => {
    switch (message.role) {
      case 'assistant':
        return message.toolCalls && message.toolCalls.length > 0
          ? { role: 'assistant', content: message.content, toolCalls: message.toolCalls.map(hookToolCall) }
          : { role: 'assistant', content: message.content };
      case 'tool':
        return { role: 'tool', content: message.content, toolCallId: message.toolCallId };
      default:
        return { role: message.role, content: message.content };
    }
  });
}

export function hookResponse(response: ChatResponse): ModelCallResponse {
  return { content: response.content, toolCalls: response.toolCalls.map(hookToolCall), finishReason: finishReasonOf(response), usage: { ...response.usage } };
}

/** `tool_calls` when the model called tools, else `stop` (a provider's own reason when it gives one). */
export function finishReasonOf(response: ChatResponse): string {
  const given = (response as { finishReason?: unknown }).finishReason;
  if (typeof given === 'string' && given.length > 0) return given;
  return response.toolCalls.length > 0 ? 'tool_calls' : 'stop';
}

/** The request a `before_model_request` transform asked for: its messages, the offered tools it kept. */
export function transformedRequest(request: ChatRequest, messages: readonly ModelCallMessage[], toolNames: readonly string[]): ChatRequest {
  const kept = new Set(toolNames);
  const chat = chatMessages(request.messages, messages);
  return {
    ...request,
    messages: chat,
    tools: request.tools.filter((tool) => kept.has(toolNameOf(tool))),
    // The scripted model's `{{prompt}}` / `{{lastToolResult}}` are those messages: they follow the transform.
    prompt: follow(request.prompt, firstUser(request.messages), firstUser(chat)),
    ...(request.lastToolResult !== undefined ? { lastToolResult: follow(request.lastToolResult, lastTool(request.messages), lastTool(chat)) } : {}),
  };
}

function chatMessages(before: readonly ChatMessage[], messages: readonly ModelCallMessage[]): ChatMessage[] {
  // A tool message names its tool on the wire of some providers: found from the calls it answers.
  const tools = new Map<string, { identifier: string; apiName: string }>();
  for (const message of [...before, ...messages]) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) tools.set(call.id, call);
  }
  return messages.map((message): ChatMessage => {
    switch (message.role) {
      case 'assistant':
        return message.toolCalls && message.toolCalls.length > 0
          ? { role: 'assistant', content: message.content, toolCalls: message.toolCalls.map((call) => ({ ...call, args: { ...call.args } })) }
          : { role: 'assistant', content: message.content };
      case 'tool': {
        const toolCallId = message.toolCallId ?? '';
        const tool = tools.get(toolCallId);
        return { role: 'tool', content: message.content, toolCallId, identifier: tool?.identifier ?? '', apiName: tool?.apiName ?? '' };
      }
      default:
        return { role: message.role, content: message.content };
    }
  });
}

function hookToolCall(call: ModelToolCall | ModelCallToolCall): ModelCallToolCall {
  return { id: call.id, identifier: call.identifier, apiName: call.apiName, args: call.args };
}

function follow(value: string, was: string | undefined, now: string | undefined): string {
  return was !== undefined && now !== undefined && value === was ? now : value;
}

function firstUser(messages: readonly ChatMessage[]): string | undefined {
  return messages.find((m) => m.role === 'user')?.content;
}

function lastTool(messages: readonly ChatMessage[]): string | undefined {
  return messages.findLast((m) => m.role === 'tool')?.content;
}
