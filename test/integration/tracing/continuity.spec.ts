/**
 * SPEC O3 and O4 in one process: a sub-agent's operation joins its parent's trace (its `invoke_agent`
 * is a child of the parent's `agents/call` tool span); two app instances on one database — one starts an
 * operation that waits for approval, the other approves and runs it — produce one trace; and with
 * `tracing.captureContent` the prompt and the tool arguments appear on spans, header secrets never.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dropSchema, postgresDatabaseOption, postgresSuite, uniqueSchemaName } from '../persistence/test-databases.js';
import { bootRuntime, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { HUMAN_LOOP_CONFIG, HumanLoopTools, untilOperation, waiting } from '../human-loop/human-loop-kit.js';
import { installTestSdk, parentOf, type TestSdk } from './otel-test-sdk.js';

let sdk: TestSdk;

beforeAll(() => {
  sdk = installTestSdk();
});

afterAll(async () => {
  await sdk?.shutdown();
});

describe('O3: a sub-agent joins the parent trace', () => {
  let app: RuntimeApp;
  beforeAll(async () => {
    app = await bootRuntime({ observe: true, config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools] });
  });
  afterAll(() => app?.close());

  it('O3: the child invoke_agent is a child of the parent agents/call span, in the same trace', async () => {
    sdk.reset();
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'manager', prompt: 'ask the helper' });
    expect(await within(done, 'the manager finishes', 20_000)).toMatchObject({ reason: 'done' });
    const spans = sdk.spans();
    const parent = spans.find((span) => span.name === 'invoke_agent manager' && span.attributes['nest_agent_hooks.operation.id'] === operationId);
    const call = spans.find((span) => span.name === 'execute_tool agents/call');
    const child = spans.find((span) => span.name === 'invoke_agent helper');
    expect(parent && call && child).toBeTruthy();
    expect(child!.spanContext().traceId).toBe(parent!.spanContext().traceId);
    expect(parentOf(child!)).toBe(call!.spanContext().spanId);
    expect(call!.attributes['nest_agent_hooks.tool.outcome']).toBe('pending');
  });
});

const describePostgres = await postgresSuite('tracing/continuity.spec.ts', 'one trace across two app instances');

describePostgres('O3: an approval across two app instances on one database is one trace', () => {
  const schema = uniqueSchemaName();
  let starter: RuntimeApp;
  let approver: RuntimeApp;
  beforeAll(async () => {
    starter = await bootRuntime({ observe: true, config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools], database: postgresDatabaseOption(schema) });
    approver = await bootRuntime({ observe: true, config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools], database: postgresDatabaseOption(schema) });
  }, 30_000);
  afterAll(async () => {
    await approver?.close();
    await starter?.close();
    await dropSchema(schema);
  });

  it('O3: the approved call runs in the other instance, under a resumed invoke_agent in the starter trace', async () => {
    sdk.reset();
    const { operationId, done } = await starter.runtime.execAgent({ agentId: 'writer', prompt: 'write the report' });
    await untilOperation(starter.store, operationId, waiting, 'the operation to wait for approval');
    const [pending] = await starter.store.interventions(operationId);
    await approver.runtime.approve(operationId, pending!.toolCallId);
    expect(await within(done, 'the starter sees the end', 20_000)).toMatchObject({ reason: 'done' });

    const spans = sdk.spans().filter((span) => span.attributes['nest_agent_hooks.operation.id'] === operationId);
    const root = spans.find((span) => span.name === 'invoke_agent writer' && span.attributes['nest_agent_hooks.operation.resumed'] === undefined);
    expect(root).toBeDefined();
    const resumed = spans.filter((span) => span.attributes['nest_agent_hooks.operation.resumed'] === true);
    expect(resumed.length).toBeGreaterThan(0);
    expect(resumed.every((span) => parentOf(span) === root!.spanContext().spanId)).toBe(true);
    const write = spans.filter((span) => span.name === 'execute_tool fs/write');
    expect(write.map((span) => span.attributes['nest_agent_hooks.tool.outcome'])).toContain('ok');
    expect(spans.every((span) => span.spanContext().traceId === root!.spanContext().traceId)).toBe(true);
  });
});

/** A loopback receiver that answers 204 and keeps each request's path and traceparent. */
async function startReceiver(): Promise<{ url: (path: string) => string; seen: { path: string; traceparent?: string }[]; close(): Promise<void> }> {
  const seen: { path: string; traceparent?: string }[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push({ path: req.url ?? '', ...(typeof req.headers.traceparent === 'string' ? { traceparent: req.headers.traceparent } : {}) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { url: (path) => `http://127.0.0.1:${port}${path}`, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('O1/O3: work outside a step — a deferred result, a decision, the terminal sequence — is in the operation trace', () => {
  let app: RuntimeApp;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
    app = await bootRuntime({ observe: true, config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools], webhooks: { allowNetworks: ['127.0.0.0/8'] } });
  });
  afterAll(async () => {
    await app?.close();
    await receiver?.close();
  });

  const traceIdOf = (traceparent: string | undefined) => traceparent?.split('-')[1];

  it('O3: a deferred result posted from outside any trace: its after-chain webhook and onComplete carry the operation trace and are spans of it', async () => {
    sdk.reset();
    receiver.seen.length = 0;
    const { operationId, done } = await app.runtime.execAgent({
      agentId: 'browser',
      prompt: 'open it',
      hooks: [
        { id: 'after', type: 'afterToolCall', webhook: { url: receiver.url('/after') } },
        { id: 'complete', type: 'onComplete', webhook: { url: receiver.url('/complete') } },
      ],
    });
    await untilOperation(app.store, operationId, waiting, 'the operation to wait for the client');
    const [pending] = await app.store.interventions(operationId);
    // The root span ended when the operation paused: the result's work runs in a new segment of the trace.
    await app.runtime.completeDeferred(operationId, pending!.toolCallId, { content: 'the page', success: true });
    expect(await within(done, 'done', 20_000)).toMatchObject({ reason: 'done' });

    const spans = sdk.spans();
    const root = spans.find((span) => span.name === 'invoke_agent browser' && span.attributes['nest_agent_hooks.operation.id'] === operationId && span.attributes['nest_agent_hooks.operation.resumed'] === undefined);
    expect(root).toBeDefined();
    const traceId = root!.spanContext().traceId;
    for (const path of ['/after', '/complete']) {
      const request = receiver.seen.find((r) => r.path === path);
      expect([path, traceIdOf(request?.traceparent)]).toEqual([path, traceId]);
    }
    const webhookSpans = spans.filter((span) => span.name.startsWith('webhook ') && span.spanContext().traceId === traceId).map((span) => span.name);
    expect(webhookSpans).toEqual(expect.arrayContaining(['webhook afterToolCall', 'webhook onComplete']));
  });
});

describe('O4: content capture is opt-in and never includes secrets', () => {
  let app: RuntimeApp;
  const SECRET = 'header-secret-9e1f';
  beforeAll(async () => {
    process.env.TRACE_TEST_TOKEN = SECRET;
    app = await bootRuntime({ observe: true, config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools], module: { tracing: { captureContent: true } }, webhooks: { allowNetworks: ['127.0.0.0/8'] } });
  });
  afterAll(async () => {
    delete process.env.TRACE_TEST_TOKEN;
    await app?.close();
  });

  it('O4: with captureContent the prompt and arguments are on the spans; a webhook header secret is not', async () => {
    sdk.reset();
    const { done } = await app.runtime.execAgent({
      agentId: 'helper',
      prompt: 'prompt-capture-3c1d',
      // Unreachable on purpose (closed port): the delivery fails under its policy; what matters is its headers.
      hooks: [{ id: 'audit', type: 'afterToolCall', webhook: { url: 'http://127.0.0.1:9/hook', headers: { authorization: 'Bearer ${TRACE_TEST_TOKEN}' }, allowedEnvVars: ['TRACE_TEST_TOKEN'] } }],
    });
    await within(done, 'the helper finishes', 20_000);
    const text = JSON.stringify(sdk.spans().map((span) => ({ attributes: span.attributes, events: span.events })));
    expect(text).toContain('prompt-capture-3c1d');
    expect(text).not.toContain(SECRET);
  });
});
