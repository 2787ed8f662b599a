/**
 * The scripted model's token arithmetic (DESIGN §8): tokens = ceil(characters / 4) per message, where the
 * characters of a message are its content plus the JSON of each tool call's args. Characters are UTF-16
 * code units (`string.length`), so the numbers are cheap and identical in every process.
 */
import type { ChatMessage } from './chat-model.js';

export interface ArgsCarrier {
  args: Record<string, unknown>;
}

export function messageCharacters(content: string, toolCalls: readonly ArgsCarrier[] = []): number {
  let characters = content.length;
  for (const call of toolCalls) characters += JSON.stringify(call.args).length;
  return characters;
}

export function tokensOf(characters: number): number {
  return Math.ceil(characters / 4);
}

/** Input tokens of a request: each message rounded up on its own, then summed. */
export function inputTokens(messages: readonly ChatMessage[]): number {
  let total = 0;
  for (const message of messages) {
    total += tokensOf(messageCharacters(message.content, message.role === 'assistant' ? message.toolCalls : undefined));
  }
  return total;
}
