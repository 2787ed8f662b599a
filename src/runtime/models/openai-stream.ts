/**
 * The Chat Completions streaming wire format (`stream: true`, SPEC K5): Server-Sent Events whose `data:` lines
 * are `chat.completion.chunk` objects, ended by `data: [DONE]`. Pure: `OpenAiStreamReader` takes the body's
 * text as it arrives, hands each piece of the answer's text to `onText`, reassembles tool calls from their
 * `index`ed deltas (id and name in the first, arguments in pieces), and takes the usage of the final chunk
 * (`stream_options.include_usage`). `answer()` is the same shape a whole response gives (`openai-wire.ts`),
 * so both paths decode tool names and arguments in one place.
 */
import { z } from 'zod';

const chunkSchema = z.object({
  choices: z
    .array(
      z.object({
        index: z.number().optional(),
        delta: z
          .object({
            content: z.string().nullish(),
            tool_calls: z
              .array(
                z.object({
                  index: z.number().int().min(0).max(1023),
                  id: z.string().nullish(),
                  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: z.object({ prompt_tokens: z.unknown().optional(), completion_tokens: z.unknown().optional() }).nullish(),
});

interface ToolCallParts {
  id: string;
  name: string;
  arguments: string;
}

/** Why a stream could not be read: the reader never says more (a chunk may quote the request). */
export type StreamProblem = 'not_a_chunk' | 'ended_early';

export class OpenAiStreamReader {
  private buffer = '';
  private content = '';
  private readonly calls = new Map<number, ToolCallParts>();
  private usage: { prompt_tokens?: unknown; completion_tokens?: unknown } | undefined;
  private finished = false;
  private done = false;
  problem: StreamProblem | undefined;

  constructor(private readonly onText: (text: string) => void) {}

  /** Feeds the next piece of the body; false once the stream is unreadable (`problem` says why). */
  push(text: string): boolean {
    this.buffer += text;
    let end: number;
    while (this.problem === undefined && (end = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, end).replace(/\r$/, '');
      this.buffer = this.buffer.slice(end + 1);
      this.line(line);
    }
    return this.problem === undefined;
  }

  /** The whole answer in a completion's shape, once the body ended; `undefined` with `problem` set otherwise. */
  answer(): { choices: [{ message: { content: string; tool_calls: unknown[] } }]; usage?: unknown } | undefined {
    if (this.buffer.trim() !== '') this.line(this.buffer.replace(/\r$/, ''));
    this.buffer = '';
    // A body that closed before `[DONE]` and before any choice finished was cut short: the answer is partial.
    if (this.problem === undefined && !this.done && !this.finished) this.problem = 'ended_early';
    if (this.problem !== undefined) return undefined;
    const toolCalls = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
    return { choices: [{ message: { content: this.content, tool_calls: toolCalls } }], ...(this.usage ? { usage: this.usage } : {}) };
  }

  private line(line: string): void {
    if (this.done || !line.startsWith('data:')) return; // comments, `event:`, `id:` and blank lines carry nothing here
    const data = line.slice(5).trim();
    if (data === '[DONE]') {
      this.done = true;
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      this.problem = 'not_a_chunk';
      return;
    }
    const parsed = chunkSchema.safeParse(json);
    if (!parsed.success) {
      this.problem = 'not_a_chunk';
      return;
    }
    if (parsed.data.usage) this.usage = parsed.data.usage;
    // One choice is asked for (no `n`); a server that sends more is read for its first.
    for (const choice of parsed.data.choices ?? []) {
      if ((choice.index ?? 0) !== 0) continue;
      if (choice.finish_reason) this.finished = true;
      const delta = choice.delta;
      if (!delta) continue;
      if (delta.content) {
        this.content += delta.content;
        this.onText(delta.content);
      }
      for (const part of delta.tool_calls ?? []) {
        const call = this.calls.get(part.index) ?? { id: '', name: '', arguments: '' };
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name += part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
        this.calls.set(part.index, call);
      }
    }
  }
}
