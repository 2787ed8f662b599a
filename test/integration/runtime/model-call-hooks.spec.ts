/**
 * SPEC K1–K3, K6: the model-call points around every model call the runtime makes, on a real database
 * (SQLite and PostgreSQL), with the model a local server speaking the OpenAI wire format (or the scripted
 * model for compaction): order, mocks, transforms, controls by handler and by webhook, notifications without
 * content, timeline rows, and nothing at all when no model-call hook is registered.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Injectable } from '@nestjs/common';
import { jest } from '@jest/globals';
import { ModelResponseContext, OnHook, type HookInvocation, type ModelRequestContext } from '../../../src/index.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { OPERATION_READER, type OperationReadPort } from '../../../src/runtime/operation-read.port.js';
import { completion, sendJson, startChatCompletionsServer, type ChatCompletionsServer } from '../models/chat-completions-server.js';
import { driverSuites, dropSchema, postgresDatabaseOption, uniqueSchemaName, type DriverName } from '../persistence/test-databases.js';
import { bootRuntime, eventOf, guardUnhandledRejections, pointsOf, within, type BootOptions, type RuntimeApp } from './runtime-test-kit.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

guardUnhandledRejections();

const CONFIG = scriptedConfig({
  system: 'model-call-hooks',
  models: {
    remote: { provider: 'openai', model: 'gpt-test', baseUrlEnv: 'MCH_LLM_BASE', apiKeyEnv: 'MCH_LLM_KEY' },
    chatty: [toolCalls(call('clock/now')), answer('It is {{lastToolResult}}.')],
  },
  agents: {
    remote: { model: 'remote', tools: ['clock/*'] },
    compacting: { model: 'chatty', tools: ['clock/*'], limits: { compactAtTokens: 20 } },
  },
});

const MODEL_POINTS = ['before_model_request', 'beforeModelCall', 'onModelCallError', 'after_model_response', 'afterModelCall'] as const;
const LONG_PROMPT = 'Please keep track of the time for me. '.repeat(4);
const executions = { now: 0 };

@Injectable()
class Clock {
  @Tool({ identifier: 'clock', apiName: 'now', description: 'time', parameters: { type: 'object', properties: {} } })
  now(): string {
    executions.now++;
    return '2026-11-30T12:00:00Z';
  }
}

/** What the engine-family transforms do in the current test (set per test; none by default). */
const engine: {
  request?: (context: ModelRequestContext) => ModelRequestContext | undefined;
  response?: (context: ModelResponseContext) => ModelResponseContext | undefined;
} = {};

@Injectable()
class ModelTransforms {
  @OnHook('before_model_request', { id: 'request-transform' })
  request(invocation: HookInvocation<ModelRequestContext>): ModelRequestContext | undefined {
    return engine.request?.(invocation.payload);
  }

  @OnHook('after_model_response', { id: 'response-transform' })
  response(invocation: HookInvocation<ModelResponseContext>): ModelResponseContext | undefined {
    return engine.response?.(invocation.payload);
  }
}

@Injectable()
class WarnTransforms {
  @OnHook('before_model_request', { id: 'warn-transform', failurePolicy: 'warn' })
  request(invocation: HookInvocation<ModelRequestContext>): ModelRequestContext | undefined {
    return engine.request?.(invocation.payload);
  }
}

/** A loopback webhook receiver: every body kept, each answered by `answer`. */
async function startReceiver(answer: (path: string) => unknown): Promise<{ url: string; bodies: { path: string; body: Record<string, unknown>; raw: string }[]; close(): Promise<void> }> {
  const bodies: { path: string; body: Record<string, unknown>; raw: string }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      bodies.push({ path: req.url ?? '', body: JSON.parse(raw) as Record<string, unknown>, raw });
      const reply = answer(req.url ?? '');
      if (reply === undefined) res.writeHead(204).end();
      else sendJson(res, 200, reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const describeEachDriver = await driverSuites();
const schemas: string[] = [];

afterAll(async () => {
  for (const schema of schemas) await dropSchema(schema);
}, 30_000);

describeEachDriver('model-call hooks on %s', (driver: DriverName) => {
  let app: RuntimeApp | undefined;
  let llm: ChatCompletionsServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;

  async function boot(options: Partial<BootOptions> = {}): Promise<RuntimeApp> {
    let database: string | undefined;
    if (driver === 'postgres') {
      const schema = uniqueSchemaName();
      schemas.push(schema);
      database = postgresDatabaseOption(schema);
    }
    app = await bootRuntime({ observe: true, config: CONFIG, providers: [Clock], webhooks: { allowNetworks: ['127.0.0.0/8'] }, ...(database ? { database } : {}), ...options });
    return app;
  }

  const timeline = (operationId: string) => app!.moduleRef.get<OperationReadPort>(OPERATION_READER).timeline(operationId);

  beforeEach(async () => {
    executions.now = 0;
    delete engine.request;
    delete engine.response;
    llm = await startChatCompletionsServer();
    llm.handle((_call, res) => sendJson(res, 200, completion({ content: 'the answer' }, { prompt_tokens: 5, completion_tokens: 3 })));
    process.env.MCH_LLM_BASE = llm.baseUrl;
    process.env.MCH_LLM_KEY = 'test-key';
  });

  afterEach(async () => {
    await app?.close();
    app = undefined;
    await llm.close();
    await receiver?.close();
    receiver = undefined;
    delete process.env.MCH_LLM_BASE;
    delete process.env.MCH_LLM_KEY;
  });

  it('K1: the points fire in order around every model call, a compaction summary (purpose compaction) and a step answer (purpose step)', async () => {
    await boot({ providers: [Clock, ModelTransforms] });
    const seen: string[] = [];
    const { operationId, done } = await app!.runtime.execAgent({
      agentId: 'compacting',
      prompt: LONG_PROMPT,
      hooks: [
        { id: 'before', type: 'beforeModelCall', handler: (e) => void seen.push(`before:${e.purpose}:${e.model}`) },
        { id: 'after', type: 'afterModelCall', handler: (e) => void seen.push(`after:${e.purpose}:${e.mocked}:${e.response.finishReason}`) },
      ],
    });
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: 'It is 2026-11-30T12:00:00Z.' });
    const points = pointsOf(app!.events, operationId, [...MODEL_POINTS, 'beforeStep', 'beforeCompact', 'afterCompact', 'beforeToolCall', 'afterStep']);
    const modelCall = ['before_model_request', 'beforeModelCall', 'after_model_response', 'afterModelCall'];
    expect(points.slice(0, 13)).toEqual(['beforeStep', 'beforeCompact', ...modelCall, 'afterCompact', ...modelCall, 'beforeToolCall', 'afterStep']);
    expect(seen.slice(0, 4)).toEqual(['before:compaction:chatty', 'after:compaction:false:stop', 'before:step:chatty', 'after:step:false:tool_calls']);
    const request = eventOf(app!.events, operationId, 'before_model_request')?.payload as ModelRequestContext;
    expect(request).toMatchObject({ runId: operationId, agentId: 'compacting', purpose: 'compaction', toolNames: [] });
  });

  it('K3: a beforeModelCall deny calls no model and completes blocked, its content the reason', async () => {
    await boot();
    const { operationId, done } = await app!.runtime.execAgent({
      agentId: 'remote',
      prompt: 'hello',
      hooks: [{ id: 'gate', type: 'beforeModelCall', handler: () => ({ decision: 'deny', reason: 'no model today' }) }],
    });
    const result = await within(done, 'done');
    expect(result).toMatchObject({ reason: 'blocked', content: 'no model today', usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } });
    expect(llm.calls).toHaveLength(0);
    const assistant = (await app!.store.messages(operationId)).find((m) => m.role === 'assistant');
    expect(assistant).toMatchObject({ content: 'no model today', error: 'hook_denied', state: { hookVerdict: { outcome: 'denied', phase: 'beforeModelCall', reason: 'no model today' } } });
    expect(assistant?.toolCalls).toBeUndefined();
    expect(eventOf(app!.events, operationId, 'onComplete')?.payload).toMatchObject({ reason: 'blocked' });
    expect((await app!.store.getOperation(operationId))?.reason).toBe('blocked');
    expect((await timeline(operationId)).filter((r) => r.point === 'beforeModelCall')).toMatchObject([{ hookId: 'gate', outcome: 'denied' }]);
  });

  it('K3: a deny without a reason uses "Blocked by beforeModelCall hook."', async () => {
    await boot();
    const { done } = await app!.runtime.execAgent({ agentId: 'remote', prompt: 'hello', hooks: [{ id: 'gate', type: 'beforeModelCall', handler: () => ({ decision: 'deny' }) }] });
    expect(await within(done, 'done')).toMatchObject({ reason: 'blocked', content: 'Blocked by beforeModelCall hook.' });
    expect(llm.calls).toHaveLength(0);
  });

  it('K3: a mock is the model\'s answer — no model call, its tool calls go through G1 and the tool chain, marked mocked, costing nothing', async () => {
    await boot();
    let mocks = 0;
    const afterCalls: { mocked: boolean; content: string }[] = [];
    const { operationId, done } = await app!.runtime.execAgent({
      agentId: 'remote',
      prompt: 'hello',
      hooks: [
        {
          id: 'cache',
          type: 'beforeModelCall',
          handler: (e) => {
            if (mocks++ > 0) return;
            e.mock({ content: 'from cache', toolCalls: [{ identifier: 'clock', apiName: 'now', args: {} }, { identifier: 'evil', apiName: 'wipe', args: {} }], usage: { inputTokens: 7 } });
          },
        },
        { id: 'watch', type: 'afterModelCall', handler: (e) => void afterCalls.push({ mocked: e.mocked, content: e.response.content }) },
      ],
    });
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: 'the answer' });
    // The first call was mocked; only the second reached the provider.
    expect(llm.calls).toHaveLength(1);
    expect(afterCalls).toEqual([{ mocked: true, content: 'from cache' }, { mocked: false, content: 'the answer' }]);
    expect(executions.now).toBe(1);
    const messages = await app!.store.messages(operationId);
    expect(messages[1]).toMatchObject({ role: 'assistant', content: 'from cache', state: { mocked: true } });
    const refused = messages.find((m) => m.role === 'tool' && m.identifier === 'evil');
    expect(refused?.state).toMatchObject({ error: { type: 'tool_not_available' } });
    expect(pointsOf(app!.events, operationId, ['beforeToolCall', 'onToolCallError'])).toEqual(['beforeToolCall', 'onToolCallError']);
    // The mock cost nothing: the operation's cost is the real call's (the provider's usage has no price).
    const operation = await app!.store.getOperation(operationId);
    expect(operation?.usage).toMatchObject({ inputTokens: 7 + 5, outputTokens: 3, costUsd: 0 });
    expect((await timeline(operationId)).filter((r) => r.point === 'beforeModelCall').map((r) => r.outcome)).toEqual(['mocked', 'notification']);
  });

  it('K2: a before_model_request transform redacts the messages and removes a tool; the model receives the redacted request', async () => {
    await boot({ providers: [Clock, ModelTransforms] });
    engine.request = (context) =>
      context.withMessages(context.messages.map((m) => ({ ...m, content: m.content.replaceAll('4111-1111-1111-1111', '[CARD]') }))).withToolNames([]);
    const seen: string[][] = [];
    const { done } = await app!.runtime.execAgent({
      agentId: 'remote',
      prompt: 'charge 4111-1111-1111-1111 please',
      hooks: [{ id: 'look', type: 'beforeModelCall', handler: (e) => void seen.push(e.messages.map((m) => m.content)) }],
    });
    expect(await within(done, 'done')).toMatchObject({ reason: 'done' });
    const sent = JSON.stringify(llm.calls[0]?.body);
    expect(sent).not.toContain('4111-1111-1111-1111');
    expect(sent).toContain('charge [CARD] please');
    expect(llm.calls[0]?.body.tools ?? []).toEqual([]);
    // beforeModelCall sees the request as it will be sent (after the transforms).
    expect(seen[0]).toContain('charge [CARD] please');
  });

  it('K2: a transform offering a tool the agent was not offered is a hook failure: fail ends the run before any model call', async () => {
    await boot({ providers: [Clock, ModelTransforms] });
    engine.request = (context) => context.withToolNames([...context.toolNames, 'evil/wipe']);
    const { operationId, done } = await app!.runtime.execAgent({ agentId: 'remote', prompt: 'hello' });
    expect(await within(done, 'done')).toMatchObject({ reason: 'error' });
    expect(llm.calls).toHaveLength(0);
    expect((await timeline(operationId)).filter((r) => r.point === 'before_model_request')).toMatchObject([{ hookId: 'request-transform', outcome: 'error' }]);
  });

  it('K2: under failure_policy warn the same transform is skipped and the model gets the offer G1 made', async () => {
    await boot({ providers: [Clock, WarnTransforms] });
    engine.request = (context) => context.withToolNames(['evil/wipe']);
    const { done } = await app!.runtime.execAgent({ agentId: 'remote', prompt: 'hello' });
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: 'the answer' });
    expect((llm.calls[0]?.body.tools as { function: { name: string } }[]).map((t) => t.function.name)).toEqual(['clock__now']);
  });

  it('K2: an after_model_response transform changes the answer, and one that adds a tool call is a hook failure', async () => {
    await boot({ providers: [Clock, ModelTransforms] });
    engine.response = (context) => context.withContent(context.content.toUpperCase());
    const first = await app!.runtime.execAgent({ agentId: 'remote', prompt: 'hello' });
    expect(await within(first.done, 'done')).toMatchObject({ reason: 'done', content: 'THE ANSWER' });
    // Built by hand, as a careless plugin might: a tool call the answer did not have.
    engine.response = (context) => new ModelResponseContext({ ...context, toolCalls: [{ id: 'x', identifier: 'clock', apiName: 'now', args: {} }] });
    const second = await app!.runtime.execAgent({ agentId: 'remote', prompt: 'hello' });
    expect(await within(second.done, 'done')).toMatchObject({ reason: 'error' });
    expect(executions.now).toBe(0);
  });

  it('K3/K2: an afterModelCall webhook control deny replaces the answer and drops its tool calls before anything is stored or run; the control got the content in full', async () => {
    llm.handle((_call, res) =>
      sendJson(res, 200, { ...completion({ content: 'secret plan', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'clock__now', arguments: '{}' } }] }), choices: [{ index: 0, message: { role: 'assistant', content: 'secret plan', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'clock__now', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] }),
    );
    receiver = await startReceiver(() => ({ decision: 'deny', reason: 'leaks the plan' }));
    await boot();
    const { operationId, done } = await app!.runtime.execAgent({
      agentId: 'remote',
      prompt: 'tell me the PROMPT-MARKER',
      hooks: [{ id: 'guard', type: 'afterModelCall', webhook: { url: `${receiver.url}/guard`, responseHandling: 'toolCall' } }],
    });
    expect(await within(done, 'done')).toMatchObject({ reason: 'blocked', content: 'leaks the plan' });
    expect(executions.now).toBe(0);
    const messages = await app!.store.messages(operationId);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(messages[1]).toMatchObject({ content: 'leaks the plan', error: 'hook_denied', state: { hookVerdict: { phase: 'afterModelCall', outcome: 'denied' } } });
    expect(messages[1]?.toolCalls).toBeUndefined();
    expect(JSON.stringify(messages)).not.toContain('secret plan');
    expect(pointsOf(app!.events, operationId, ['beforeToolCall'])).toEqual([]);
    const body = receiver.bodies[0]!.body as { response: { content: string; toolCalls: unknown[] }; messages: { content: string }[]; hookType: string };
    expect(body.hookType).toBe('afterModelCall');
    expect(body.response).toMatchObject({ content: 'secret plan', finishReason: 'tool_calls', toolCalls: [{ id: 'call_1', identifier: 'clock', apiName: 'now', args: {} }] });
    expect(body.messages.map((m) => m.content)).toContain('tell me the PROMPT-MARKER');
  });

  it('K2/B2: notification webhooks on the model-call points get metadata only, never content', async () => {
    llm.handle((_call, res) => sendJson(res, 200, completion({ content: 'ANSWER-MARKER' }, { prompt_tokens: 5, completion_tokens: 3 })));
    receiver = await startReceiver(() => undefined);
    await boot();
    const { done } = await app!.runtime.execAgent({
      agentId: 'remote',
      prompt: 'PROMPT-MARKER',
      hooks: [
        { id: 'n-before', type: 'beforeModelCall', webhook: { url: `${receiver.url}/before` } },
        { id: 'n-after', type: 'afterModelCall', webhook: { url: `${receiver.url}/after` } },
      ],
    });
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: 'ANSWER-MARKER' });
    expect(receiver.bodies.map((b) => b.path)).toEqual(['/before', '/after']);
    for (const { raw } of receiver.bodies) {
      expect(raw).not.toContain('PROMPT-MARKER');
      expect(raw).not.toContain('ANSWER-MARKER');
      expect(raw).not.toContain('clock');
    }
    expect(receiver.bodies[0]!.body).toMatchObject({ hookType: 'beforeModelCall', model: 'gpt-test', purpose: 'step', messageCount: 1 });
    expect(receiver.bodies[1]!.body).toMatchObject({ hookType: 'afterModelCall', finishReason: 'stop', usage: { inputTokens: 5, outputTokens: 3 }, mocked: false });
    expect(receiver.bodies[1]!.body).not.toHaveProperty('response');
  });

  it('K2: a failed call fires onModelCallError with type and status (never the body), then the run ends in error', async () => {
    llm.handle((_call, res) => sendJson(res, 400, { error: { message: 'BODY-MARKER bad request' } }));
    await boot();
    const errors: unknown[] = [];
    const { done } = await app!.runtime.execAgent({ agentId: 'remote', prompt: 'hello', hooks: [{ id: 'err', type: 'onModelCallError', handler: (e) => void errors.push(e) }] });
    expect(await within(done, 'done')).toMatchObject({ reason: 'error' });
    expect(errors).toEqual([expect.objectContaining({ type: 'onModelCallError', model: 'gpt-test', purpose: 'step', error: { type: 'http_error', status: 400 }, attempt: 1, willRetry: false })]);
    expect(JSON.stringify(errors)).not.toContain('BODY-MARKER');
  });

  it('K6: with no model-call hooks a step builds no model-call event, dispatches nothing and writes no model-call timeline row', async () => {
    await boot({ observe: false });
    const dispatcher = app!.dispatcher;
    const spies = [jest.spyOn(dispatcher, 'transform'), jest.spyOn(dispatcher, 'gateModelCall'), jest.spyOn(dispatcher, 'gateModelResponse')];
    const dispatched = jest.spyOn(dispatcher, 'dispatch');
    const { operationId, done } = await app!.runtime.execAgent({ agentId: 'remote', prompt: 'hello', hooks: [{ id: 'end', type: 'onComplete', handler: () => undefined }] });
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: 'the answer' });
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    expect(dispatched.mock.calls.map(([point]) => point)).not.toContain('onModelCallError');
    expect((await timeline(operationId)).map((r) => r.point)).toEqual(['onComplete']);
  });
});
