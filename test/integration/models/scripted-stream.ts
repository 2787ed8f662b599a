/**
 * K5 test pieces shared by the local and queue streaming specs: a loopback model that streams on cue, and
 * the delta texts a watcher saw (library events or SSE frames).
 */
import type { ServerResponse } from 'node:http';
import type { OperationEvent } from '../../../src/index.js';
import type { SseEvent } from '../../e2e/support/sse.js';
import { deferred, type Deferred } from '../runtime/runtime-test-kit.js';
import { chunk, completion, openStream, sendJson, usageChunk, type ChatCompletionsServer, type RecordedCall } from './chat-completions-server.js';

export const deltaTexts = (events: readonly OperationEvent[]) => events.flatMap((e) => (e.type === 'delta' ? [e.text] : []));
export const sseDeltaTexts = (events: readonly SseEvent[]) => events.filter((e) => e.event === 'delta').map((e) => e.data.text as string);

/**
 * The model answers `pieces`: streamed when asked to stream — nothing until `start`, then the first
 * `before` pieces, the rest after `rest`, then the usage chunk — or whole when not.
 */
export function scriptedStream(llm: ChatCompletionsServer, pieces: readonly string[], before: number): { start: Deferred<void>; rest: Deferred<void> } {
  const start = deferred();
  const rest = deferred();
  const usage = { prompt_tokens: 3, completion_tokens: pieces.length };
  llm.handle((call: RecordedCall, res: ServerResponse) => {
    if (!call.body.stream) return sendJson(res, 200, completion({ content: pieces.join('') }, usage));
    const stream = openStream(res);
    void start.promise.then(async () => {
      stream.send(chunk({ role: 'assistant', content: '' }));
      for (const piece of pieces.slice(0, before)) stream.send(chunk({ content: piece }));
      await rest.promise;
      for (const piece of pieces.slice(before)) stream.send(chunk({ content: piece }));
      stream.send(chunk({}, 'stop'));
      stream.send(usageChunk(usage));
      stream.end();
    });
  });
  return { start, rest };
}
