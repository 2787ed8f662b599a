/**
 * SPEC K5, the OpenAI-compatible provider streaming against a local server speaking the Chat Completions
 * streaming wire format: `stream: true` with `stream_options.include_usage` only when the call streams, the
 * text handed to `onDelta` as it arrives (before the answer is over), tool calls reassembled from their
 * indexed deltas, the usage of the final chunk, a server that ignores `stream`, and broken streams typed
 * without echoing a byte of them.
 */
import { ModelError, type ChatRequest, type ModelToolSpec } from '../../../src/runtime/models/chat-model.js';
import { OpenAiChatModel } from '../../../src/runtime/models/openai-chat-model.js';
import { encodeToolName } from '../../../src/runtime/models/openai-tool-names.js';
import { chunk, completion, openStream, sendJson, startChatCompletionsServer, streamAnswer, usageChunk, type ChatCompletionsServer } from './chat-completions-server.js';

const KEY = 'sk-stream-DISTINCTIVE-key-4c1d';
let server: ChatCompletionsServer;
let env: NodeJS.ProcessEnv;
const models: OpenAiChatModel[] = [];

function model(): OpenAiChatModel {
  const built = new OpenAiChatModel({ provider: 'openai', model: 'gpt-test', baseUrlEnv: 'STREAM_LLM_BASE', apiKeyEnv: 'STREAM_LLM_KEY', costPerInputTokenUsd: 0.5, costPerOutputTokenUsd: 1 }, { env });
  models.push(built);
  return built;
}

const kbSearch: ModelToolSpec = { identifier: 'kb', apiName: 'docs.search', description: 'Search the docs', parameters: {} };
const chat = (extra: Partial<ChatRequest> = {}): ChatRequest => ({ messages: [{ role: 'user', content: 'Hello' }], tools: [], prompt: 'Hello', ...extra });

beforeAll(async () => {
  server = await startChatCompletionsServer();
});
beforeEach(() => {
  env = { STREAM_LLM_BASE: server.baseUrl, STREAM_LLM_KEY: KEY };
  server.calls.length = 0;
});
afterAll(async () => {
  await Promise.all(models.map((m) => m.close()));
  await server.close();
});

describe('K5: the OpenAI-compatible provider streams', () => {
  it('K5: asks with stream: true and include_usage; each piece reaches onDelta while the server still writes; usage from the final chunk', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    server.handle((_call, res) => {
      const stream = openStream(res);
      stream.send(chunk({ role: 'assistant', content: '' }));
      stream.send(chunk({ content: 'Hel' }));
      stream.send(chunk({ content: 'lo, ' }));
      // The rest only once the test saw the first pieces: they were handed on as they came.
      void held.then(() => {
        stream.send(chunk({ content: 'world' }));
        stream.send(chunk({}, 'stop'));
        stream.send(usageChunk({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 }));
        stream.end();
      });
    });
    const pieces: string[] = [];
    let answered = false;
    const answer = model()
      .complete(chat(), {
        onDelta: (text) => {
          pieces.push(text);
          if (pieces.join('') === 'Hello, ') release();
        },
      })
      .finally(() => (answered = true));
    await held;
    expect(answered).toBe(false);
    expect(pieces).toEqual(['Hel', 'lo, ']);
    const response = await answer;
    expect(pieces).toEqual(['Hel', 'lo, ', 'world']);
    expect(response).toEqual({ content: 'Hello, world', toolCalls: [], usage: { inputTokens: 12, outputTokens: 3, costUsd: 9 } });
    const [call] = server.calls;
    expect(call!.body).toEqual({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hello' }], stream: true, stream_options: { include_usage: true } });
    expect(call!.headers.accept).toBe('text/event-stream');
    expect(call!.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('K5: tool calls are reassembled from their indexed deltas (id and name first, arguments in pieces), names decoded', async () => {
    const hashed = encodeToolName(kbSearch);
    server.handle((_call, res) => {
      const stream = openStream(res);
      stream.send(chunk({ role: 'assistant', content: 'Looking', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'clock__now', arguments: '' } }] }));
      stream.send(chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: hashed, arguments: '{"q":' } }] }));
      stream.send(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"tz":"UT' } }] }));
      stream.send(chunk({ tool_calls: [{ index: 1, function: { arguments: '"refunds"}' } }] }));
      stream.send(chunk({ content: ' it up', tool_calls: [{ index: 0, function: { arguments: 'C"}' } }] }));
      stream.send(chunk({}, 'tool_calls'));
      stream.send(usageChunk({ prompt_tokens: 40, completion_tokens: 20 }));
      stream.end();
    });
    const pieces: string[] = [];
    const response = await model().complete(chat({ tools: [{ identifier: 'clock', apiName: 'now', description: 'time', parameters: {} }, kbSearch] }), { onDelta: (text) => pieces.push(text) });
    expect(response.toolCalls).toEqual([
      { id: 'call_a', identifier: 'clock', apiName: 'now', args: { tz: 'UTC' } },
      { id: 'call_b', identifier: 'kb', apiName: 'docs.search', args: { q: 'refunds' } },
    ]);
    // Only the answer's text is streamed, never a tool call's arguments.
    expect(pieces).toEqual(['Looking', ' it up']);
    expect(response.content).toBe('Looking it up');
    expect(response.usage).toEqual({ inputTokens: 40, outputTokens: 20, costUsd: 40 });
  });

  it('K5: a server that ignores stream and answers whole is read as one; its text is one delta', async () => {
    server.handle((_call, res) => sendJson(res, 200, completion({ content: 'all at once' }, { prompt_tokens: 1, completion_tokens: 2 })));
    const pieces: string[] = [];
    const response = await model().complete(chat(), { onDelta: (text) => pieces.push(text) });
    expect(pieces).toEqual(['all at once']);
    expect(response.content).toBe('all at once');
  });

  it('K5: without onDelta nothing streams (no stream field, the whole answer)', async () => {
    server.handle((call, res) => (call.body.stream ? streamAnswer(res, ['no']) : sendJson(res, 200, completion({ content: 'whole' }))));
    expect((await model().complete(chat())).content).toBe('whole');
    expect(server.calls[0]!.body.stream).toBeUndefined();
  });

  it('K5: a stream cut before its end is a network_error (retried, K4); a chunk that is not one is invalid_response; neither echoes the stream', async () => {
    server.handle((_call, res) => {
      const stream = openStream(res);
      stream.send(chunk({ content: 'BODY-DISTINCTIVE partial' }));
      stream.end(false);
    });
    const cut = await model().complete(chat(), { onDelta: () => undefined }).catch((error: unknown) => error);
    expect(cut).toBeInstanceOf(ModelError);
    expect((cut as ModelError).code).toBe('network_error');
    expect((cut as ModelError).message).not.toContain('DISTINCTIVE');

    server.handle((_call, res) => {
      const stream = openStream(res);
      stream.send('{"error": {"message": "BODY-DISTINCTIVE overloaded"}, "choices": "nope"}');
      stream.end();
    });
    const broken = await model().complete(chat(), { onDelta: () => undefined }).catch((error: unknown) => error);
    expect(broken).toBeInstanceOf(ModelError);
    expect((broken as ModelError).code).toBe('invalid_response');
    expect((broken as ModelError).message).not.toContain('DISTINCTIVE');
    expect(String((broken as ModelError).summary)).not.toContain('DISTINCTIVE');
  });

  it('K5: a cancel during the stream ends the call as cancelled', async () => {
    server.handle((_call, res) => {
      const stream = openStream(res);
      stream.send(chunk({ content: 'first' }));
      // Never finishes: only the cancel ends it.
    });
    const aborter = new AbortController();
    const call = model().complete(chat(), { signal: aborter.signal, onDelta: () => aborter.abort() });
    const error = await call.catch((caught: unknown) => caught);
    expect((error as ModelError).code).toBe('cancelled');
  });
});
