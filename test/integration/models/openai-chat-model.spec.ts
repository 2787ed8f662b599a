/**
 * Issue 4 item 5: the OpenAI-compatible provider against a local server speaking the Chat Completions wire
 * format. The server asserts the request shape (model, messages with tool_calls / tool_call_id, tools as
 * functions, the Authorization header from the configured variable); the tests cover answers, tool-call
 * round trips, usage, error statuses, malformed bodies and arguments, a hung server and cancellation.
 * No error message may carry the key or any response body text.
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { ModelError, type ChatMessage, type ChatRequest, type ModelToolSpec } from '../../../src/runtime/models/chat-model.js';
import { OpenAiChatModel } from '../../../src/runtime/models/openai-chat-model.js';
import { encodeToolName } from '../../../src/runtime/models/openai-tool-names.js';
import { completion, sendJson, startChatCompletionsServer, type ChatCompletionsServer } from './chat-completions-server.js';
import { eventually } from '../../support/eventually.js';

const KEY = 'sk-test-DISTINCTIVE-key-91f3';
const BODY_SECRET = 'BODY-TEXT-DISTINCTIVE-55';

let server: ChatCompletionsServer;
let env: NodeJS.ProcessEnv;
const models: OpenAiChatModel[] = [];

function model(extra: Partial<ConstructorParameters<typeof OpenAiChatModel>[0]> = {}): OpenAiChatModel {
  const built = new OpenAiChatModel(
    { provider: 'openai', model: 'gpt-test', baseUrlEnv: 'TEST_LLM_BASE', apiKeyEnv: 'TEST_LLM_KEY', ...extra },
    { env },
  );
  models.push(built);
  return built;
}

const clockNow: ModelToolSpec = {
  identifier: 'clock',
  apiName: 'now',
  description: 'The current time',
  parameters: { type: 'object', properties: { tz: { type: 'string' } } },
};
const kbSearch: ModelToolSpec = { identifier: 'kb', apiName: 'docs.search', description: 'Search the docs', parameters: {} };

function chat(messages: ChatMessage[], extra: Partial<ChatRequest> = {}): ChatRequest {
  return { messages, tools: [], prompt: 'hi', ...extra };
}

/** The ModelError a call rejects with, checked never to carry the key or the response body. */
async function modelError(work: Promise<unknown>): Promise<ModelError> {
  let caught: unknown;
  try {
    await work;
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ModelError);
  const error = caught as ModelError;
  expect(error.message).not.toContain(KEY);
  expect(error.message).not.toContain('DISTINCTIVE');
  expect(error.message).toContain('gpt-test');
  return error;
}

beforeAll(async () => {
  server = await startChatCompletionsServer();
});
beforeEach(() => {
  env = { TEST_LLM_BASE: server.baseUrl, TEST_LLM_KEY: KEY };
  server.calls.length = 0;
});
afterAll(async () => {
  await Promise.all(models.map((m) => m.close()));
  await server.close();
});

describe('OpenAI-compatible provider: requests and answers', () => {
  it('a plain answer: model, messages, bearer key from the configured variable, usage and cost', async () => {
    server.handle((_call, res) => sendJson(res, 200, completion({ content: 'Hello there' }, { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 })));
    const response = await model({ costPerInputTokenUsd: 0.5, costPerOutputTokenUsd: 1 }).complete(
      chat([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello' },
      ]),
    );
    expect(response).toEqual({ content: 'Hello there', toolCalls: [], usage: { inputTokens: 12, outputTokens: 3, costUsd: 9 } });
    expect(server.calls).toHaveLength(1);
    const [call] = server.calls;
    expect(call!.method).toBe('POST');
    expect(call!.url).toBe('/v1/chat/completions');
    expect(call!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(call!.headers['content-type']).toBe('application/json');
    // No tools: no `tools` field (the API rejects an empty list).
    expect(call!.body).toEqual({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello' },
      ],
    });
  });

  it('tool calls round trip: tools as functions, history with tool_calls and tool_call_id, names mapped both ways', async () => {
    const hashed = encodeToolName(kbSearch);
    expect(hashed).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    server.handle((_call, res) =>
      sendJson(
        res,
        200,
        completion(
          {
            content: null,
            tool_calls: [
              { id: 'call_abc', type: 'function', function: { name: 'clock__now', arguments: '{"tz":"Europe/Paris"}' } },
              { id: 'call_def', type: 'function', function: { name: hashed, arguments: '{"q":"refunds","limit":3}' } },
            ],
          },
          { prompt_tokens: 40, completion_tokens: 20 },
        ),
      ),
    );
    const response = await model().complete(
      chat(
        [
          { role: 'user', content: 'What time is it in Paris?' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', identifier: 'clock', apiName: 'now', args: { tz: 'UTC' } }] },
          { role: 'tool', content: '12:00', toolCallId: 'call_1', identifier: 'clock', apiName: 'now' },
          { role: 'assistant', content: 'Checking docs', toolCalls: [{ id: 'call_2', identifier: 'kb', apiName: 'docs.search', args: {} }] },
          { role: 'tool', content: 'nothing', toolCallId: 'call_2', identifier: 'kb', apiName: 'docs.search' },
        ],
        { tools: [clockNow, kbSearch] },
      ),
    );
    expect(response.toolCalls).toEqual([
      { id: 'call_abc', identifier: 'clock', apiName: 'now', args: { tz: 'Europe/Paris' } },
      { id: 'call_def', identifier: 'kb', apiName: 'docs.search', args: { q: 'refunds', limit: 3 } },
    ]);
    expect(response.content).toBe('');
    expect(response.usage).toEqual({ inputTokens: 40, outputTokens: 20, costUsd: 0 });

    const { body } = server.calls[0]!;
    expect(body.tools).toEqual([
      { type: 'function', function: { name: 'clock__now', description: 'The current time', parameters: clockNow.parameters } },
      // An empty schema is sent as an empty object schema.
      { type: 'function', function: { name: hashed, description: 'Search the docs', parameters: { type: 'object', properties: {} } } },
    ]);
    expect(body.messages).toEqual([
      { role: 'user', content: 'What time is it in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'clock__now', arguments: '{"tz":"UTC"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '12:00' },
      { role: 'assistant', content: 'Checking docs', tool_calls: [{ id: 'call_2', type: 'function', function: { name: hashed, arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_2', content: 'nothing' },
    ]);
  });

  it('a function name the request did not offer still decodes (the runtime reports an unknown tool)', async () => {
    server.handle((_call, res) =>
      sendJson(res, 200, completion({ content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'fs__delete', arguments: '{}' } }, { id: 'c2', type: 'function', function: { name: 'mystery', arguments: '{}' } }] })),
    );
    const response = await model().complete(chat([{ role: 'user', content: 'x' }], { tools: [clockNow] }));
    expect(response.toolCalls.map(({ identifier, apiName }) => ({ identifier, apiName }))).toEqual([
      { identifier: 'fs', apiName: 'delete' },
      { identifier: '', apiName: 'mystery' },
    ]);
  });

  it('missing usage counts as zero; a missing tool-call id is generated', async () => {
    server.handle((_call, res) => sendJson(res, 200, completion({ content: 'ok', tool_calls: [{ function: { name: 'clock__now', arguments: '{}' } }] })));
    const response = await model({ costPerInputTokenUsd: 1, costPerOutputTokenUsd: 1 }).complete(chat([{ role: 'user', content: 'x' }], { tools: [clockNow] }));
    expect(response.usage).toEqual({ inputTokens: 0, outputTokens: 0, costUsd: 0 });
    expect(response.toolCalls[0]!.id).toMatch(/^call_[0-9a-f-]{36}$/);
  });

  it('reads base URL and key at call time (a rotated key needs no restart); no key → no Authorization header', async () => {
    server.handle((_call, res) => sendJson(res, 200, completion({ content: 'ok' })));
    const m = model();
    await m.complete(chat([{ role: 'user', content: 'x' }]));
    env.TEST_LLM_KEY = 'rotated-key';
    await m.complete(chat([{ role: 'user', content: 'x' }]));
    delete env.TEST_LLM_KEY;
    await m.complete(chat([{ role: 'user', content: 'x' }]));
    expect(server.calls.map((c) => c.headers.authorization)).toEqual([`Bearer ${KEY}`, 'Bearer rotated-key', undefined]);
  });

  it('defaults to OPENAI_BASE_URL / OPENAI_API_KEY from process.env; a query string on the base URL is kept', async () => {
    server.handle((_call, res) => sendJson(res, 200, completion({ content: 'ok' })));
    const saved = { base: process.env.OPENAI_BASE_URL, key: process.env.OPENAI_API_KEY };
    process.env.OPENAI_BASE_URL = `${server.baseUrl}/?api-version=2024-10-21`;
    process.env.OPENAI_API_KEY = KEY;
    try {
      const m = new OpenAiChatModel({ provider: 'openai', model: 'gpt-test' });
      models.push(m);
      expect((await m.complete(chat([{ role: 'user', content: 'x' }]))).content).toBe('ok');
    } finally {
      if (saved.base === undefined) delete process.env.OPENAI_BASE_URL;
      else process.env.OPENAI_BASE_URL = saved.base;
      if (saved.key === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved.key;
    }
    expect(server.calls[0]!.url).toBe('/v1/chat/completions?api-version=2024-10-21');
    expect(server.calls[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
  });
});

describe('OpenAI-compatible provider: malformed tool-call arguments', () => {
  it('are returned with args {} and invalidArgs (never a failed step), so the runtime can show the model an error', async () => {
    server.handle((_call, res) =>
      sendJson(
        res,
        200,
        completion({
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'clock__now', arguments: `{"tz": "UTC", ${BODY_SECRET}` } },
            { id: 'c2', type: 'function', function: { name: 'clock__now', arguments: '[1, 2]' } },
            { id: 'c3', type: 'function', function: { name: 'clock__now', arguments: '' } },
            { id: 'c4', type: 'function', function: { name: 'clock__now', arguments: '{"tz":"UTC"}' } },
          ],
        }),
      ),
    );
    const response = await model().complete(chat([{ role: 'user', content: 'x' }], { tools: [clockNow] }));
    expect(response.toolCalls).toEqual([
      { id: 'c1', identifier: 'clock', apiName: 'now', args: {}, invalidArgs: 'the arguments are not valid JSON' },
      { id: 'c2', identifier: 'clock', apiName: 'now', args: {}, invalidArgs: 'the arguments must be a JSON object' },
      { id: 'c3', identifier: 'clock', apiName: 'now', args: {} },
      { id: 'c4', identifier: 'clock', apiName: 'now', args: { tz: 'UTC' } },
    ]);
    expect(JSON.stringify(response)).not.toContain(BODY_SECRET);
  });
});

describe('OpenAI-compatible provider: failures', () => {
  it.each([401, 500])('HTTP %i → http_error with the status, never the body or the key', async (status) => {
    server.handle((_call, res) => sendJson(res, status, { error: { message: `Incorrect API key provided: ${KEY} ${BODY_SECRET}` } }));
    const error = await modelError(model().complete(chat([{ role: 'user', content: 'x' }])));
    expect(error.code).toBe('http_error');
    expect(error.status).toBe(status);
    expect(error.message).toBe(`model gpt-test at ${new URL(server.baseUrl).host} answered HTTP ${status}`);
  });

  it('K4: a Retry-After header (seconds or an HTTP date) travels on the error for the retry; a malformed one is ignored', async () => {
    server.handle((_call, res) => sendJson(res, 429, { error: BODY_SECRET }));
    expect((await modelError(model().complete(chat([{ role: 'user', content: 'x' }])))).retryAfterMs).toBeUndefined();
    server.handle((_call, res) => res.writeHead(429, { 'retry-after': '7' }).end(BODY_SECRET));
    expect(await modelError(model().complete(chat([{ role: 'user', content: 'x' }])))).toMatchObject({ status: 429, retryAfterMs: 7000 });
    const at = new Date(Date.now() + 30_000).toUTCString();
    server.handle((_call, res) => res.writeHead(503, { 'retry-after': at }).end());
    const dated = await modelError(model().complete(chat([{ role: 'user', content: 'x' }])));
    expect(dated.retryAfterMs).toBeGreaterThan(25_000);
    expect(dated.retryAfterMs).toBeLessThanOrEqual(30_000);
    server.handle((_call, res) => res.writeHead(503, { 'retry-after': 'soon' }).end());
    expect((await modelError(model().complete(chat([{ role: 'user', content: 'x' }])))).retryAfterMs).toBeUndefined();
  });

  it('K4: timeoutMs is the request\'s deadline: a hung server is a timeout after it', async () => {
    server.handle(() => undefined);
    const error = await modelError(model({ timeoutMs: 100 }).complete(chat([{ role: 'user', content: 'x' }])));
    expect(error.code).toBe('timeout');
    expect(error.message).toContain('100 ms');
  });

  it('a redirect is not followed: http_error', async () => {
    server.handle((_call, res) => res.writeHead(307, { location: 'http://example.com/' }).end());
    const error = await modelError(model().complete(chat([{ role: 'user', content: 'x' }])));
    expect(error).toMatchObject({ code: 'http_error', status: 307 });
  });

  it('a body that is not JSON → invalid_response, without the body text', async () => {
    server.handle((_call, res) => sendJson(res, 200, `{"choices": [ ${BODY_SECRET}`));
    const error = await modelError(model().complete(chat([{ role: 'user', content: 'x' }])));
    expect(error.code).toBe('invalid_response');
    expect(error.message).toContain('not valid JSON');
  });

  it('JSON that is not a chat completion (no choices, wrong types) → invalid_response', async () => {
    for (const body of [{ choices: [] }, { error: BODY_SECRET }, { choices: [{ message: { content: 42 } }] }, [1, 2]]) {
      server.handle((_call, res) => sendJson(res, 200, body));
      const error = await modelError(model().complete(chat([{ role: 'user', content: 'x' }])));
      expect(error.code).toBe('invalid_response');
    }
  });

  it('a hung server → timeout after timeoutSeconds', async () => {
    server.handle(() => undefined); // never answers
    const started = performance.now();
    const error = await modelError(model({ timeoutSeconds: 0.3 }).complete(chat([{ role: 'user', content: 'x' }])));
    const elapsed = performance.now() - started;
    expect(error.code).toBe('timeout');
    expect(error.message).toContain('timed out after 300 ms');
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(3000);
  });

  it('a server that sends headers and then stalls the body → timeout too (one deadline for the exchange)', async () => {
    server.handle((_call, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"choices": [');
    });
    const error = await modelError(model({ timeoutSeconds: 0.3 }).complete(chat([{ role: 'user', content: 'x' }])));
    expect(error.code).toBe('timeout');
  });

  it('the request signal cancels a call in flight → cancelled, promptly', async () => {
    server.handle(() => undefined);
    const controller = new AbortController();
    const failing = modelError(model({ timeoutSeconds: 10 }).complete(chat([{ role: 'user', content: 'x' }], { signal: controller.signal })));
    // Abort while the call is in flight: once the server has it (it never answers).
    await eventually(() => server.calls.length > 0, 'the server to have the call');
    const aborted = performance.now();
    controller.abort();
    const error = await failing;
    expect(error.code).toBe('cancelled');
    expect(performance.now() - aborted).toBeLessThan(2000);
  });

  it('an already aborted signal → cancelled without any request', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await modelError(model().complete(chat([{ role: 'user', content: 'x' }], { signal: controller.signal })));
    expect(error.code).toBe('cancelled');
    expect(server.calls).toHaveLength(0);
  });

  it('a refused connection → network_error with the error code', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    env.TEST_LLM_BASE = `http://127.0.0.1:${port}/v1`;
    const error = await modelError(model().complete(chat([{ role: 'user', content: 'x' }])));
    expect(error.code).toBe('network_error');
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('a base URL variable that is not an http(s) URL → configuration error naming the variable, not the value', async () => {
    for (const bad of [`not a url ${KEY}`, `ftp://${KEY}.example.com/`, `https://user:${KEY}@example.com/v1`]) {
      env.TEST_LLM_BASE = bad;
      const error = await modelError(model().complete(chat([{ role: 'user', content: 'x' }])));
      expect(error.code).toBe('configuration');
      expect(error.message).toContain('TEST_LLM_BASE');
    }
    expect(server.calls).toHaveLength(0);
  });

  it('a key that cannot be a header value → configuration error, without the key', async () => {
    env.TEST_LLM_KEY = `${KEY}\r\nX-Injected: 1`;
    const error = await modelError(model().complete(chat([{ role: 'user', content: 'x' }])));
    expect(error.code).toBe('configuration');
    expect(server.calls).toHaveLength(0);
  });
});
