/**
 * SPEC K4 through real runs: agents.yaml's `retry`, `timeoutMs` and `fallback` drive the model calls of a
 * step. A fallback answers once the first model's attempts are spent (its usage counted); when every
 * attempt fails the operation ends `error` with `error { type, summary }` naming the last model and status,
 * and no provider body reaches the logs, the events or the summary; a cancel during a backoff ends the run
 * at once.
 */
import { SpanStatusCode } from '@opentelemetry/api';
import { operationView } from '../../../src/runtime/reading/operation-views.js';
import { RuntimeDatabase } from '../../../src/persistence/runtime-database.js';
import { installTestSdk, type TestSdk } from '../tracing/otel-test-sdk.js';
import { completion, sendJson, startChatCompletionsServer, type ChatCompletionsServer } from '../models/chat-completions-server.js';
import { bootRuntime, eventually, guardUnhandledRejections, within, type RuntimeApp } from './runtime-test-kit.js';

guardUnhandledRejections();

const BODY_MARKER = 'PROVIDER-BODY-MARKER-k4-e81f';

const config = `
system: k4-resilience
models:
  main:   { provider: openai, model: gpt-main, baseUrlEnv: K4_MAIN_URL, apiKeyEnv: K4_KEY, retry: { attempts: 2, initialDelayMs: 1, maxDelayMs: 5 } }
  backup: { provider: openai, model: gpt-backup, baseUrlEnv: K4_BACKUP_URL, apiKeyEnv: K4_KEY, costPerInputTokenUsd: 0.01, retry: { attempts: 2, initialDelayMs: 1, maxDelayMs: 5 }, timeoutMs: 5000 }
  patient: { provider: openai, model: gpt-patient, baseUrlEnv: K4_MAIN_URL, apiKeyEnv: K4_KEY, retry: { attempts: 3, initialDelayMs: 60000, maxDelayMs: 60000 } }
agents:
  assistant: { model: main, fallback: [ backup ] }
  waiter: { model: patient, fallback: [ backup ] }
`;

let sdk: TestSdk;
let main: ChatCompletionsServer;
let backup: ChatCompletionsServer;
let app: RuntimeApp;

beforeAll(async () => {
  sdk = installTestSdk();
  main = await startChatCompletionsServer();
  backup = await startChatCompletionsServer();
  process.env.K4_MAIN_URL = main.baseUrl;
  process.env.K4_BACKUP_URL = backup.baseUrl;
  process.env.K4_KEY = 'k4-test-key';
  app = await bootRuntime({ observe: true, config });
}, 30_000);
beforeEach(() => {
  main.calls.length = 0;
  backup.calls.length = 0;
  sdk.reset();
});
afterAll(async () => {
  await app?.close();
  await main?.close();
  await backup?.close();
  await sdk?.shutdown();
  delete process.env.K4_MAIN_URL;
  delete process.env.K4_BACKUP_URL;
  delete process.env.K4_KEY;
});

async function viewOf(operationId: string) {
  const stores = await app.moduleRef.get(RuntimeDatabase).stores();
  return operationView((await stores.operations.get(operationId))!, []);
}

describe('K4 in a run', () => {
  it('K2, K4: onModelCallError fires once per failed attempt: willRetry while the same model is tried again, nextModel when a fallback follows; never a body', async () => {
    main.handle((_call, res) => sendJson(res, 429, { error: { message: BODY_MARKER } }));
    backup.handle((_call, res) => sendJson(res, 200, completion({ content: 'answered' })));
    const seen: unknown[] = [];
    const { done } = await app.runtime.execAgent({
      agentId: 'assistant',
      prompt: 'hello',
      hooks: [{ id: 'errors', type: 'onModelCallError', handler: (event) => void seen.push({ model: event.model, purpose: event.purpose, error: event.error, attempt: event.attempt, willRetry: event.willRetry, nextModel: event.nextModel }) }],
    });
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: 'answered' });
    expect(seen).toEqual([
      { model: 'gpt-main', purpose: 'step', error: { type: 'http_error', status: 429 }, attempt: 1, willRetry: true, nextModel: undefined },
      { model: 'gpt-main', purpose: 'step', error: { type: 'http_error', status: 429 }, attempt: 2, willRetry: false, nextModel: 'gpt-backup' },
    ]);
    expect(JSON.stringify(seen)).not.toContain(BODY_MARKER);
  });

  it('K4: the fallback model answers once the first model\'s attempts are spent; its usage is the operation\'s', async () => {
    main.handle((_call, res) => sendJson(res, 503, { error: { message: BODY_MARKER } }));
    backup.handle((_call, res) => sendJson(res, 200, completion({ content: 'from the backup' }, { prompt_tokens: 40, completion_tokens: 2, total_tokens: 42 })));
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'assistant', prompt: 'hello' });
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: 'from the backup' });
    expect([main.calls.length, backup.calls.length]).toEqual([2, 1]);
    // Both models were asked the same conversation, each under its own model name.
    expect(main.calls.map((call) => call.body.model)).toEqual(['gpt-main', 'gpt-main']);
    expect(backup.calls[0]!.body).toMatchObject({ model: 'gpt-backup', messages: main.calls[0]!.body.messages });
    expect((await app.store.getOperation(operationId))?.usage).toEqual({ inputTokens: 40, outputTokens: 2, costUsd: 0.4 });
    const chats = sdk.spans().filter((span) => span.name.startsWith('chat '));
    expect(chats.map((span) => [span.name, span.status.code])).toEqual([
      ['chat gpt-main', SpanStatusCode.ERROR],
      ['chat gpt-main', SpanStatusCode.ERROR],
      ['chat gpt-backup', SpanStatusCode.UNSET],
    ]);
  });

  it('K4: every attempt failing ends the operation `error`, its summary naming the last model and status; no body anywhere', async () => {
    main.handle((_call, res) => sendJson(res, 500, { error: { message: BODY_MARKER } }));
    backup.handle((_call, res) => res.writeHead(429, { 'retry-after': '0', 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: BODY_MARKER } })));
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'assistant', prompt: 'hello' });
    expect(await within(done, 'done')).toMatchObject({ reason: 'error' });
    expect([main.calls.length, backup.calls.length]).toEqual([2, 2]);
    const summary = 'model gpt-backup answered HTTP 429';
    const view = await viewOf(operationId);
    expect(view).toMatchObject({ status: 'completed', reason: 'error', error: { type: 'ModelError', summary } });
    expect(app.logLines).toContainEqual(expect.stringContaining(`operation ${operationId} failed: ModelError: ${summary}`));
    const events = app.events.filter((event) => event.operationId === operationId);
    expect(events.length).toBeGreaterThan(0);
    const spans = sdk.spans().map((span) => [span.name, span.attributes, span.events, span.status]);
    expect(JSON.stringify([view, app.logLines, events, spans, await app.store.messages(operationId)])).not.toContain(BODY_MARKER);
  });

  it('K4: a cancel during a backoff ends the run at once (the backoff is a minute; the run ends within the test)', async () => {
    main.handle((_call, res) => res.writeHead(429, { 'retry-after': '60' }).end(BODY_MARKER));
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'waiter', prompt: 'hello' });
    // The failed attempt's span has ended: the step is in its minute-long wait before the second attempt.
    await eventually(() => sdk.spans().some((span) => span.name === 'chat gpt-patient' && span.status.code === SpanStatusCode.ERROR), 'the first attempt failed');
    await app.runtime.cancel(operationId);
    expect(await within(done, 'the cancelled run', 10_000)).toMatchObject({ reason: 'interrupted' });
    // Neither a second attempt nor the fallback was tried.
    expect([main.calls.length, backup.calls.length]).toEqual([1, 0]);
  });
});
