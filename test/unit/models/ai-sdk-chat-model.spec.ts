/**
 * DESIGN §12: the AI SDK adapter's mappings, against hand-written provider-level models of each
 * specification version (the LLM is the one thing we fake), so they run on every Node version. The real
 * providers over a loopback server are test/integration/models/ai-sdk-provider.spec.ts (Node 22+).
 * The SDK's own `LanguageModelV4` / `LanguageModelV3` types are checked to fit `AiSdkLanguageModel` at
 * compile time: a type-only import, erased before Node sees it.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LanguageModelV3, LanguageModelV4 } from '@ai-sdk/provider';
import { expectTypeOf } from 'expect-type';
import { ModelError, aiSdkChatModel, type AiSdkLanguageModel, type ChatRequest } from '../../../src/index.js';
import type { AiSdkCallOptions, AiSdkGenerateResult, AiSdkPart } from '../../../src/runtime/models/ai-sdk-language-model.js';
import { checkedCodeModels } from '../../../src/runtime/models/code-models.js';
import { attemptFailure } from '../../../src/runtime/models/model-retry-policy.js';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src');

/** A provider-level model that answers from `generate` / `stream` and records the options it was called with. */
function fakeModel(
  answer: { generate?: (options: AiSdkCallOptions) => Promise<AiSdkGenerateResult>; stream?: (options: AiSdkCallOptions) => AiSdkPart[] | Error },
  specificationVersion: 'v2' | 'v3' | 'v4' = 'v4',
): AiSdkLanguageModel & { calls: AiSdkCallOptions[] } {
  const calls: AiSdkCallOptions[] = [];
  return {
    specificationVersion,
    provider: 'fake.chat',
    modelId: 'fake-1',
    calls,
    doGenerate: (options) => {
      calls.push(options);
      return answer.generate ? answer.generate(options) : Promise.reject(new Error('no generate'));
    },
    doStream: async (options) => {
      calls.push(options);
      const parts = answer.stream ? answer.stream(options) : new Error('no stream');
      if (parts instanceof Error) throw parts;
      return {
        stream: new ReadableStream<AiSdkPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
}

/** An AI SDK `APICallError` as the SDK builds it (the real class is checked by name and shape, never loaded). */
function apiCallError(statusCode: number | undefined, headers: Record<string, string> = {}): Error {
  return Object.assign(new Error('Rate limit reached for secret-org: PROVIDER-BODY-SECRET'), {
    name: 'AI_APICallError',
    statusCode,
    responseHeaders: headers,
    responseBody: '{"error":"PROVIDER-BODY-SECRET"}',
    requestBodyValues: { messages: [{ role: 'user', content: 'PROMPT-SECRET' }] },
    isRetryable: true,
  });
}

const request: ChatRequest = {
  prompt: 'what time is it?',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'what time is it?' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'call-1', identifier: 'clock', apiName: 'now', args: { zone: 'UTC' } }] },
    { role: 'tool', content: '12:00', toolCallId: 'call-1', identifier: 'clock', apiName: 'now' },
  ],
  tools: [
    { identifier: 'clock', apiName: 'now', description: 'the time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } },
    { identifier: 'docs.v2', apiName: 'search', description: 'search', parameters: {} },
  ],
};

const text = (value: string): AiSdkPart => ({ type: 'text', text: value });
const usageV4 = { inputTokens: { total: 12, noCache: 12, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 3, text: 3, reasoning: undefined } };

describe('DESIGN §12 the AI SDK adapter (aiSdkChatModel)', () => {
  it('DESIGN §12: the SDK\'s LanguageModelV4 and LanguageModelV3 are AiSdkLanguageModels (compile-time)', () => {
    expectTypeOf<LanguageModelV4>().toExtend<AiSdkLanguageModel>();
    expectTypeOf<LanguageModelV3>().toExtend<AiSdkLanguageModel>();
  });

  it('DESIGN §12: nothing in src/ loads the AI SDK: the package runs without it (an optional peer)', () => {
    const offenders = readdirSync(SRC, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
      .map((entry) => join(entry.parentPath, entry.name))
      .filter((file) => /from ['"](?:ai|@ai-sdk\/[^'"]+)['"]|import\(['"](?:ai|@ai-sdk\/)/.test(readFileSync(file, 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('DESIGN §12: messages, tools and settings become the SDK prompt; tool names are encoded and decoded', async () => {
    const model = fakeModel({
      generate: async () => ({
        content: [text('Calling '), text('tools.'), { type: 'tool-call', toolCallId: 'tc-9', toolName: 'clock__now', input: '{"zone":"CET"}' }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage: usageV4,
      }),
    });
    const chat = aiSdkChatModel(model, { costPerInputTokenUsd: 0.01, costPerOutputTokenUsd: 0.1, settings: { temperature: 0, maxOutputTokens: 256 } });
    const answer = await chat.complete(request);

    expect(answer).toEqual({
      content: 'Calling tools.',
      toolCalls: [{ id: 'tc-9', identifier: 'clock', apiName: 'now', args: { zone: 'CET' } }],
      finishReason: 'tool_calls',
      usage: { inputTokens: 12, outputTokens: 3, costUsd: expect.closeTo(0.42, 10) },
    });
    const [sent] = model.calls;
    expect(sent).toMatchObject({ temperature: 0, maxOutputTokens: 256 });
    expect(sent!.prompt).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'what time is it?' }] },
      // An answer that only called tools sends no empty text part.
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'clock__now', input: { zone: 'UTC' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call-1', toolName: 'clock__now', output: { type: 'text', value: '12:00' } }] },
    ]);
    expect(sent!.tools).toEqual([
      { type: 'function', name: 'clock__now', description: 'the time', inputSchema: { type: 'object', properties: { zone: { type: 'string' } } } },
      // A dotted identifier is not a valid function name: a hashed one, and a schema for "no arguments".
      { type: 'function', name: expect.stringMatching(/^docs_v2_search-[0-9a-f]{10}$/), description: 'search', inputSchema: { type: 'object', properties: {} } },
    ]);
  });

  it('DESIGN §12: invalid JSON arguments reach the runtime as invalidArgs; provider-executed calls are not ours to run', async () => {
    const chat = aiSdkChatModel(
      fakeModel({
        generate: async () => ({
          content: [
            { type: 'tool-call', toolCallId: 'a', toolName: 'clock__now', input: '{not json' },
            { type: 'tool-call', toolCallId: 'b', toolName: 'web_search', input: '{}', providerExecuted: true },
            { type: 'reasoning', text: 'thinking, not content' },
          ],
          finishReason: { unified: 'tool-calls', raw: undefined },
          usage: usageV4,
        }),
      }),
    );
    const answer = await chat.complete(request);
    expect(answer.content).toBe('');
    expect(answer.toolCalls).toEqual([{ id: 'a', identifier: 'clock', apiName: 'now', args: {}, invalidArgs: 'the arguments are not valid JSON' }]);
  });

  it('DESIGN §12: a v2 model (flat usage, string finish reason) maps the same; unknown reasons are other', async () => {
    const chat = aiSdkChatModel(fakeModel({ generate: async () => ({ content: [text('hi')], finishReason: 'content-filter', usage: { inputTokens: 5, outputTokens: 1 } }) }, 'v2'));
    expect(await chat.complete(request)).toMatchObject({ content: 'hi', finishReason: 'content_filter', usage: { inputTokens: 5, outputTokens: 1, costUsd: 0 } });
    const odd = aiSdkChatModel(fakeModel({ generate: async () => ({ content: [], finishReason: { unified: 'interrupted', raw: undefined }, usage: { inputTokens: undefined, outputTokens: undefined } }) }));
    expect(await odd.complete(request)).toMatchObject({ finishReason: 'other', usage: { inputTokens: 0, outputTokens: 0 } });
  });

  it('K5: with onDelta the adapter streams: each text delta as it comes, the deltas concatenate to the content', async () => {
    const model = fakeModel({
      stream: () => [
        { type: 'stream-start' },
        { type: 'text-start' },
        { type: 'text-delta', delta: 'It is ' },
        { type: 'text-delta', delta: '' },
        { type: 'text-delta', delta: 'noon.' },
        { type: 'tool-call', toolCallId: 'tc', toolName: 'clock__now', input: '{}' },
        { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usageV4 },
      ],
    });
    const deltas: string[] = [];
    const answer = await aiSdkChatModel(model).complete(request, { onDelta: (delta) => deltas.push(delta) });
    expect(deltas).toEqual(['It is ', 'noon.']);
    expect(answer).toEqual({ content: deltas.join(''), toolCalls: [{ id: 'tc', identifier: 'clock', apiName: 'now', args: {} }], finishReason: 'stop', usage: { inputTokens: 12, outputTokens: 3, costUsd: 0 } });
    expect(model.calls).toHaveLength(1);
  });

  it('K4: an APICallError keeps its status and Retry-After (retry-after-ms first) for the retry policy, never its message or body', async () => {
    const limited = aiSdkChatModel(fakeModel({ generate: () => Promise.reject(apiCallError(429, { 'retry-after-ms': '1500', 'retry-after': '9' })) }));
    const error = (await limited.complete(request).catch((e: unknown) => e)) as ModelError;
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: 'http_error', status: 429, retryAfterMs: 1500, summary: 'model fake-1 answered HTTP 429' });
    expect(attemptFailure(error)).toEqual({ type: 'http_error', status: 429, retryable: true, retryAfterMs: 1500 });
    const shown = `${error.message} ${error.summary} ${String(error.cause)} ${JSON.stringify(error)}`;
    expect(shown).not.toMatch(/PROVIDER-BODY-SECRET|PROMPT-SECRET|secret-org/);

    const seconds = await aiSdkChatModel(fakeModel({ generate: () => Promise.reject(apiCallError(503, { 'Retry-After': '2' })) })).complete(request).catch((e: unknown) => e);
    expect(attemptFailure(seconds)).toEqual({ type: 'http_error', status: 503, retryable: true, retryAfterMs: 2000 });
    const refused = await aiSdkChatModel(fakeModel({ generate: () => Promise.reject(apiCallError(400)) })).complete(request).catch((e: unknown) => e);
    expect(attemptFailure(refused)).toEqual({ type: 'http_error', status: 400, retryable: false });
  });

  it('K4: no status is a network error (retried); a missing key is configuration; other SDK errors are invalid_response', async () => {
    const fail = async (error: unknown) => aiSdkChatModel(fakeModel({ generate: () => Promise.reject(error) })).complete(request).catch((e: unknown) => e as ModelError);
    expect(attemptFailure(await fail(apiCallError(undefined)))).toMatchObject({ type: 'network_error', retryable: true });
    expect(attemptFailure(await fail(Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('x'), { code: 'ECONNRESET' }) })))).toMatchObject({ type: 'network_error', retryable: true });
    expect(attemptFailure(await fail(new DOMException('slow', 'TimeoutError')))).toMatchObject({ type: 'timeout', retryable: true });
    expect(await fail(Object.assign(new Error('OpenAI API key is missing'), { name: 'AI_LoadAPIKeyError' }))).toMatchObject({ code: 'configuration' });
    const parse = await fail(Object.assign(new Error('JSON parsing failed: Text: PROVIDER-BODY-SECRET'), { name: 'AI_JSONParseError' }));
    expect(parse).toMatchObject({ code: 'invalid_response', message: expect.not.stringContaining('PROVIDER-BODY-SECRET') });
    expect(attemptFailure(parse).retryable).toBe(false);
  });

  it('K4: an error inside a stream ends the call typed, without the provider\'s error object', async () => {
    const chat = aiSdkChatModel(fakeModel({ stream: () => [{ type: 'text-delta', delta: 'par' }, { type: 'error', error: { type: 'overloaded_error', message: 'PROVIDER-BODY-SECRET' } }] }));
    const error = (await chat.complete(request, { onDelta: () => undefined }).catch((e: unknown) => e)) as ModelError;
    expect(error).toMatchObject({ code: 'invalid_response' });
    expect(`${error.message} ${error.summary}`).not.toContain('PROVIDER-BODY-SECRET');
    const opened = aiSdkChatModel(fakeModel({ stream: () => apiCallError(429, { 'retry-after': '1' }) }));
    expect(attemptFailure(await opened.complete(request, { onDelta: () => undefined }).catch((e: unknown) => e))).toEqual({ type: 'http_error', status: 429, retryable: true, retryAfterMs: 1000 });
  });

  it('K4: a cancel ends the call at once, even when the provider ignores its abort signal', async () => {
    const model = fakeModel({ generate: () => new Promise<never>(() => undefined) });
    const aborter = new AbortController();
    const pending = aiSdkChatModel(model).complete(request, { signal: aborter.signal });
    aborter.abort();
    await expect(pending).rejects.toMatchObject({ code: 'cancelled' });
    expect(model.calls[0]!.abortSignal).toBe(aborter.signal);
    await expect(aiSdkChatModel(model).complete(request, { signal: aborter.signal })).rejects.toMatchObject({ code: 'cancelled' });
    // Not called again once cancelled.
    expect(model.calls).toHaveLength(1);
  });

  it('DESIGN §12: what is not an AI SDK model fails clearly, as configuration', () => {
    expect(() => aiSdkChatModel('openai/gpt-4.1' as unknown as AiSdkLanguageModel)).toThrow(/not a model id string/);
    expect(() => aiSdkChatModel({ specificationVersion: 'v4' } as unknown as AiSdkLanguageModel)).toThrow(/not an AI SDK language model/);
    expect(() => aiSdkChatModel({ ...fakeModel({}), specificationVersion: 'v1' } as unknown as AiSdkLanguageModel)).toThrow(/unsupported AI SDK specification version/);
    expect(() => aiSdkChatModel(fakeModel({}), { costPerInputTokenUsd: -1 })).toThrow(ModelError);
    // Given to forRoot({ models }) unwrapped, the boot error says how to wrap it.
    expect(() => checkedCodeModels({ main: fakeModel({}) })).toThrow(/"main" is not a ChatModel.*aiSdkChatModel\(model\)/);
    expect(Object.keys(checkedCodeModels({ main: aiSdkChatModel(fakeModel({})) }))).toEqual(['main']);
  });
});
