/**
 * SPEC K4 against local servers speaking the Chat Completions wire format: a 429 with Retry-After, a 500
 * then an answer, a reset connection, a server that hangs past `timeoutMs`, a 400 (not retried), fallback
 * to a second model once the first's attempts are spent, a cancel during a backoff, every attempt's usage
 * counted, one `chat` span per attempt, and a provider's error body found nowhere.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { ModelError, type ChatModel, type ChatRequest, type ChatResponse } from '../../../src/runtime/models/chat-model.js';
import type { ModelAttemptFailure } from '../../../src/runtime/models/model-attempts.js';
import type { ModelRetrySettings } from '../../../src/runtime/models/model-retry-policy.js';
import { OpenAiChatModel } from '../../../src/runtime/models/openai-chat-model.js';
import type { FallbackModel, ResolvedAgent } from '../../../src/runtime/agent-directory.port.js';
import { TracedModelCalls } from '../../../src/runtime/traced-model-calls.js';
import { AgentTracer } from '../../../src/tracing/agent-tracer.js';
import { loadOpenTelemetry } from '../../../src/tracing/open-telemetry.js';
import { installTestSdk, type TestSdk } from '../tracing/otel-test-sdk.js';
import { within } from '../runtime/runtime-test-kit.js';
import { completion, sendJson, startChatCompletionsServer, type ChatCompletionsServer } from './chat-completions-server.js';

const BODY_MARKER = 'PROVIDER-BODY-MARKER-3b7d';
const FAST: ModelRetrySettings = { attempts: 3, initialDelayMs: 1, maxDelayMs: 5 };

let sdk: TestSdk;
let calls: TracedModelCalls;
let main: ChatCompletionsServer;
let backup: ChatCompletionsServer;
/** When each request reached `main`, to measure the waits between attempts. */
let arrivals: number[];
const models: OpenAiChatModel[] = [];
const env: NodeJS.ProcessEnv = {};

function openAi(name: string, server: ChatCompletionsServer, timeoutMs?: number): OpenAiChatModel {
  env[`K4_${name}_URL`] = server.baseUrl;
  const model = new OpenAiChatModel({ provider: 'openai', model: name, baseUrlEnv: `K4_${name}_URL`, ...(timeoutMs !== undefined ? { timeoutMs } : {}) }, { env });
  models.push(model);
  return model;
}

function agentOf(own: { model: ChatModel; name: string; retry?: ModelRetrySettings; timeoutMs?: number }, fallback: FallbackModel[] = []): ResolvedAgent {
  return {
    id: 'k4-agent',
    model: own.model,
    modelInfo: { name: own.name, provider: 'openai' },
    modelSettings: { retry: own.retry ?? FAST, ...(own.timeoutMs !== undefined ? { timeoutMs: own.timeoutMs } : {}) },
    ...(fallback.length > 0 ? { fallback } : {}),
    tools: [],
    approval: [],
    deferred: [],
    limits: { maxSteps: 5, maxRepeatedFailures: 3 },
  };
}

function request(signal?: AbortSignal): ChatRequest {
  return { messages: [{ role: 'user', content: 'hi' }], tools: [], prompt: 'hi', ...(signal ? { signal } : {}) };
}

/** Calls the agent's model chain, recording every failed attempt the observer hears of. */
async function call(agent: ResolvedAgent, signal?: AbortSignal): Promise<{ response?: ChatResponse; error?: unknown; failures: ModelAttemptFailure[] }> {
  const failures: ModelAttemptFailure[] = [];
  try {
    const response = await within(calls.complete(agent, request(signal), 'op-k4', { attemptFailed: (failure) => failures.push(failure) }), 'the model call', 20_000);
    return { response, failures };
  } catch (error) {
    return { error, failures };
  }
}

const answer = (content: string, prompt = 7, output = 3) => completion({ content }, { prompt_tokens: prompt, completion_tokens: output, total_tokens: prompt + output });

/** Answers with `fail` for the first `failures` requests, then with a completion. */
function failThenAnswer(server: ChatCompletionsServer, failures: number, fail: (res: import('node:http').ServerResponse) => void, content = 'answered'): void {
  let seen = 0;
  server.handle((_call, res) => {
    seen += 1;
    if (server === main) arrivals.push(Date.now());
    if (seen <= failures) fail(res);
    else sendJson(res, 200, answer(content));
  });
}

const chatSpans = (): ReadableSpan[] => sdk.spans().filter((span) => span.name.startsWith('chat '));

beforeAll(async () => {
  sdk = installTestSdk();
  calls = new TracedModelCalls(new AgentTracer(await loadOpenTelemetry(), { captureContent: false }));
  main = await startChatCompletionsServer();
  backup = await startChatCompletionsServer();
});
beforeEach(() => {
  sdk.reset();
  arrivals = [];
  main.calls.length = 0;
  backup.calls.length = 0;
});
afterAll(async () => {
  await Promise.all(models.map((model) => model.close()));
  await main.close();
  await backup.close();
  await sdk.shutdown();
});

describe('K4 retries of one model', () => {
  it('K4: a 429 with Retry-After is retried after at least the seconds it names, and the retry answers', async () => {
    failThenAnswer(main, 1, (res) => res.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' }).end(JSON.stringify({ error: BODY_MARKER })));
    const { response, failures } = await call(agentOf({ model: openAi('gpt-rate', main), name: 'gpt-rate', retry: { attempts: 3, initialDelayMs: 1, maxDelayMs: 5_000 } }));
    expect(response?.content).toBe('answered');
    expect(main.calls).toHaveLength(2);
    // The jitter alone would wait at most 1 ms: the second request waited for the header's second.
    expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(990);
    expect(failures).toEqual([{ model: 'gpt-rate', attempt: 1, error: { type: 'http_error', status: 429 }, willRetry: true }]);
  });

  it('K4: a Retry-After longer than the backoff cap waits the cap, not the header', async () => {
    failThenAnswer(main, 1, (res) => res.writeHead(429, { 'retry-after': '3600' }).end());
    // An hour's wait would not end within the call's 20 s deadline.
    const { response } = await call(agentOf({ model: openAi('gpt-capped', main), name: 'gpt-capped', retry: { attempts: 2, initialDelayMs: 1, maxDelayMs: 50 } }));
    expect(response?.content).toBe('answered');
    expect(main.calls).toHaveLength(2);
  });

  it('K4: a 500 then an answer: retried once, the answer returned, one failed attempt reported', async () => {
    failThenAnswer(main, 1, (res) => sendJson(res, 500, { error: { message: BODY_MARKER } }));
    const { response, failures } = await call(agentOf({ model: openAi('gpt-flaky', main), name: 'gpt-flaky' }));
    expect(response?.content).toBe('answered');
    expect(main.calls).toHaveLength(2);
    expect(failures).toEqual([{ model: 'gpt-flaky', attempt: 1, error: { type: 'http_error', status: 500 }, willRetry: true }]);
  });

  it('K4: a reset connection is a network error, retried', async () => {
    failThenAnswer(main, 1, (res) => res.socket?.destroy());
    const { response, failures } = await call(agentOf({ model: openAi('gpt-reset', main), name: 'gpt-reset' }));
    expect(response?.content).toBe('answered');
    expect(failures).toEqual([{ model: 'gpt-reset', attempt: 1, error: { type: 'network_error' }, willRetry: true }]);
  });

  it('K4: a server that hangs past timeoutMs: the request is aborted as a timeout and retried', async () => {
    let hung = 0;
    main.handle((_call, res) => {
      hung += 1;
      if (hung === 1) return; // never answers
      sendJson(res, 200, answer('after the timeout'));
    });
    const { response, failures } = await call(agentOf({ model: openAi('gpt-slow', main, 150), name: 'gpt-slow', timeoutMs: 150 }));
    expect(response?.content).toBe('after the timeout');
    expect(failures).toEqual([{ model: 'gpt-slow', attempt: 1, error: { type: 'timeout' }, willRetry: true }]);
  });

  it('K4: timeoutMs alone (the client\'s default deadline longer) still ends a hung attempt as a timeout', async () => {
    main.handle(() => undefined); // never answers
    const { error, failures } = await call(agentOf({ model: openAi('gpt-hung', main), name: 'gpt-hung', retry: { attempts: 2, initialDelayMs: 1, maxDelayMs: 1 }, timeoutMs: 100 }));
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: 'timeout', summary: 'model gpt-hung: did not answer within 100 ms' });
    expect(failures.map((f) => [f.error.type, f.willRetry])).toEqual([['timeout', true], ['timeout', false]]);
    expect(main.calls).toHaveLength(2);
  });

  it('K4: timeoutMs ends an attempt even for a provider that ignores its signal', async () => {
    let asked = 0;
    const deaf: ChatModel = {
      complete: () => {
        asked += 1;
        return new Promise<ChatResponse>(() => undefined); // never settles, whatever its signal says
      },
    };
    const { error, failures } = await call(agentOf({ model: deaf, name: 'deaf', retry: { attempts: 2, initialDelayMs: 1, maxDelayMs: 1 }, timeoutMs: 50 }));
    expect(error).toMatchObject({ code: 'timeout', summary: 'model deaf: did not answer within 50 ms' });
    expect(asked).toBe(2);
    expect(failures.map((f) => f.willRetry)).toEqual([true, false]);
  });

  it('K4: a 400 is not retried: one request, the error as the provider gave it', async () => {
    main.handle((_call, res) => sendJson(res, 400, { error: { message: BODY_MARKER } }));
    const { error, failures } = await call(agentOf({ model: openAi('gpt-bad', main), name: 'gpt-bad' }));
    expect(error).toMatchObject({ code: 'http_error', status: 400, summary: 'model gpt-bad answered HTTP 400' });
    expect(main.calls).toHaveLength(1);
    expect(failures).toEqual([{ model: 'gpt-bad', attempt: 1, error: { type: 'http_error', status: 400 }, willRetry: false }]);
  });

  it('K4: every attempt is its own chat span, a failed one with its error type and status only', async () => {
    failThenAnswer(main, 2, (res) => sendJson(res, 503, { error: BODY_MARKER }));
    await call(agentOf({ model: openAi('gpt-spans', main), name: 'gpt-spans' }));
    const spans = chatSpans();
    expect(spans.map((span) => [span.name, span.attributes['nest_agent_hooks.model.attempt'], span.attributes['http.response.status_code'], span.attributes['error.type']])).toEqual([
      ['chat gpt-spans', 1, 503, 'ModelError'],
      ['chat gpt-spans', 2, 503, 'ModelError'],
      ['chat gpt-spans', 3, undefined, undefined],
    ]);
    expect(spans[2]!.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 7, 'gen_ai.usage.output_tokens': 3 });
    expect(JSON.stringify(spans.map((span) => [span.attributes, span.events, span.status]))).not.toContain(BODY_MARKER);
  });
});

describe('K4 fallbacks', () => {
  it('K4: once the first model\'s attempts are spent, the fallback model answers (each with its own retries)', async () => {
    main.handle((_call, res) => sendJson(res, 503, { error: BODY_MARKER }));
    failThenAnswer(backup, 1, (res) => sendJson(res, 502, { error: BODY_MARKER }), 'from the backup');
    const fallback: FallbackModel = { name: 'gpt-backup', provider: 'openai', model: openAi('gpt-backup', backup), retry: FAST };
    const { response, failures } = await call(agentOf({ model: openAi('gpt-main', main), name: 'gpt-main', retry: { ...FAST, attempts: 2 } }, [fallback]));
    expect(response?.content).toBe('from the backup');
    expect([main.calls.length, backup.calls.length]).toEqual([2, 2]);
    expect(failures).toEqual([
      { model: 'gpt-main', attempt: 1, error: { type: 'http_error', status: 503 }, willRetry: true },
      { model: 'gpt-main', attempt: 2, error: { type: 'http_error', status: 503 }, willRetry: false, nextModel: 'gpt-backup' },
      { model: 'gpt-backup', attempt: 1, error: { type: 'http_error', status: 502 }, willRetry: true },
    ]);
    expect(chatSpans().map((span) => span.name)).toEqual(['chat gpt-main', 'chat gpt-main', 'chat gpt-backup', 'chat gpt-backup']);
  });

  it('K4: a failure a retry would not fix (a 401) goes to the fallback at once', async () => {
    main.handle((_call, res) => sendJson(res, 401, { error: BODY_MARKER }));
    backup.handle((_call, res) => sendJson(res, 200, answer('backup')));
    const fallback: FallbackModel = { name: 'gpt-backup', provider: 'openai', model: openAi('gpt-backup', backup) };
    const { response, failures } = await call(agentOf({ model: openAi('gpt-main', main), name: 'gpt-main' }, [fallback]));
    expect(response?.content).toBe('backup');
    expect(main.calls).toHaveLength(1);
    expect(failures).toEqual([{ model: 'gpt-main', attempt: 1, error: { type: 'http_error', status: 401 }, willRetry: false, nextModel: 'gpt-backup' }]);
  });

  it('K4: when every attempt of every model fails, the error names the last model and its status, and no body', async () => {
    main.handle((_call, res) => sendJson(res, 503, { error: { message: BODY_MARKER } }));
    backup.handle((_call, res) => sendJson(res, 429, { error: { message: BODY_MARKER } }));
    const fallback: FallbackModel = { name: 'gpt-backup', provider: 'openai', model: openAi('gpt-backup', backup), retry: { ...FAST, attempts: 2 } };
    const { error, failures } = await call(agentOf({ model: openAi('gpt-main', main), name: 'gpt-main' }, [fallback]));
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: 'http_error', status: 429, summary: 'model gpt-backup answered HTTP 429' });
    expect(failures).toHaveLength(5);
    expect(failures.at(-1)).toEqual({ model: 'gpt-backup', attempt: 2, error: { type: 'http_error', status: 429 }, willRetry: false });
    const modelError = error as ModelError;
    expect(JSON.stringify([modelError.message, modelError.summary, failures, modelError.stack])).not.toContain(BODY_MARKER);
  });
});

describe('K4 cancel and usage', () => {
  it('K4: a cancel during a backoff ends the wait at once (the backoff is a minute; the call ends within the test)', async () => {
    main.handle((_call, res) => res.writeHead(429, { 'retry-after': '60' }).end());
    const aborter = new AbortController();
    const failures: ModelAttemptFailure[] = [];
    const agent = agentOf({ model: openAi('gpt-patient', main), name: 'gpt-patient', retry: { attempts: 3, initialDelayMs: 60_000, maxDelayMs: 60_000 } });
    const called = calls.complete(agent, request(aborter.signal), 'op-k4', {
      attemptFailed(failure) {
        failures.push(failure);
        // The loop enters its wait right after this returns: cancel once it is waiting.
        setImmediate(() => aborter.abort());
      },
    });
    const error = await within(called.catch((caught: unknown) => caught), 'the cancelled call', 10_000);
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: 'cancelled' });
    expect(failures).toEqual([{ model: 'gpt-patient', attempt: 1, error: { type: 'http_error', status: 429 }, willRetry: true }]);
    expect(main.calls).toHaveLength(1);
  });

  it('K4: every attempt\'s usage is counted: failed attempts add what their provider reported, the answer its own', async () => {
    // A provider that reports tokens on a failed call (the OpenAI-compatible client never reads an error body).
    let attempts = 0;
    const reporting: ChatModel = {
      complete: async () => {
        attempts += 1;
        if (attempts === 1) throw new ModelError('http_error', 'HTTP 500', 500, undefined, { usage: { inputTokens: 11, outputTokens: 1, costUsd: 0.5 } });
        if (attempts === 2) throw new ModelError('network_error', 'reset');
        return { content: 'third time', toolCalls: [], usage: { inputTokens: 5, outputTokens: 2, costUsd: 0.25 } };
      },
    };
    const { response } = await call(agentOf({ model: reporting, name: 'reporting' }));
    expect(response).toEqual({ content: 'third time', toolCalls: [], usage: { inputTokens: 16, outputTokens: 3, costUsd: 0.75 } });
  });

  it('K4: an HTTP provider\'s failed attempts cost nothing; the answer\'s usage is counted once', async () => {
    failThenAnswer(main, 2, (res) => sendJson(res, 500, { error: BODY_MARKER, usage: { prompt_tokens: 999, completion_tokens: 999 } }));
    const { response } = await call(agentOf({ model: openAi('gpt-usage', main), name: 'gpt-usage' }));
    expect(response?.usage).toEqual({ inputTokens: 7, outputTokens: 3, costUsd: 0 });
  });
});
