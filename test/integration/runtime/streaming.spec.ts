/**
 * SPEC K5 on a real database (SQLite and PostgreSQL), in a host app with the HTTP API mounted, the model a
 * local server speaking the Chat Completions streaming format: the text reaches `GET …/events` (`event:
 * delta`, no `id:`) and `runtime.events()` while the model still writes, before the message is committed,
 * and the deltas concatenate to the published content. While an output guard applies (`afterModelCall`,
 * `after_model_response`) nothing is streamed until the decision, then the decided content in one delta;
 * a denied answer never reaches either stream. A retried attempt repeats nothing already sent.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable, Module } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { AgentHooksHttpModule, AgentHooksModule, OnHook, type HookInvocation, type ModelResponseContext } from '../../../src/index.js';
import { AgentRuntime } from '../../../src/runtime/agent-runtime.js';
import { readEvents, type SseEvent } from '../../e2e/support/sse.js';
import { chunk, completion, openStream, sendJson, startChatCompletionsServer, type ChatCompletionsServer } from '../models/chat-completions-server.js';
import { appDatabases } from '../persistence/test-databases.js';
import { bootRuntime, deferred, eventually, guardUnhandledRejections, within } from './runtime-test-kit.js';
import { deltaTexts, scriptedStream, sseDeltaTexts } from '../models/scripted-stream.js';
import { record } from '../../support/record.js';

guardUnhandledRejections();

const CONFIG = `
system: streaming
models:
  remote: { provider: openai, model: gpt-test, baseUrlEnv: K5_LLM_BASE, apiKeyEnv: K5_LLM_KEY, retry: { attempts: 2, initialDelayMs: 1, maxDelayMs: 5 } }
agents:
  writer: { model: remote }
`;
const OWNER = 'stream-owner';

const { describeEach, databaseFor } = await appDatabases('streaming');

describeEach('K5 streaming on %s', (driver) => {
  let dir: string;
  let llm: ChatCompletionsServer;
  let app: NestExpressApplication;
  let runtime: AgentRuntime;
  let base: string;

  beforeAll(async () => {
    llm = await startChatCompletionsServer();
    process.env.K5_LLM_BASE = llm.baseUrl;
    process.env.K5_LLM_KEY = 'k5-key';
    dir = mkdtempSync(join(tmpdir(), 'agent-hooks-streaming-'));
    writeFileSync(join(dir, 'agents.yaml'), CONFIG);
    @Module({
      imports: [
        AgentHooksModule.forRoot({ isGlobal: true, database: databaseFor(driver, 'streaming'), configFile: join(dir, 'agents.yaml') }),
        AgentHooksHttpModule.register({ path: 'agents', owner: () => OWNER, console: false }),
      ],
    })
    class HostModule {}
    const moduleRef = await Test.createTestingModule({ imports: [HostModule] }).compile();
    app = moduleRef.createNestApplication<NestExpressApplication>({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = `${await app.getUrl()}/agents`.replace('[::1]', '127.0.0.1');
    runtime = app.get(AgentRuntime);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await llm?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Opens both watchers — the SSE route and `events()` — and waits until each has read the operation once. */
  async function watch(operationId: string) {
    const response = await fetch(`${base}/v1/operations/${operationId}/events`);
    expect(response.status).toBe(200);
    const sse: SseEvent[] = [];
    const reading = readEvents(response, 20_000, (event) => sse.push(event));
    const library = record(runtime.events(operationId));
    await eventually(() => sse.some((e) => e.event === 'message') && library.items.some((e) => e.type === 'message'), 'both watchers read the operation');
    return { sse, reading, library };
  }

  it('K5: the text reaches GET …/events (event: delta, no id) and events() as the model writes it, and the deltas concatenate to the published content', async () => {
    const pieces = ['The ', 'answer ', 'is ', 'being ', 'written.'];
    const model = scriptedStream(llm, pieces, 2);
    const { operationId, done } = await runtime.execAgent({ agentId: 'writer', prompt: 'write', ownerId: OWNER });
    const { sse, reading, library } = await watch(operationId);
    model.start.resolve();
    // The first pieces are out while the model still writes: no assistant message yet, anywhere.
    await eventually(() => sseDeltaTexts(sse).join('') === 'The answer ' && deltaTexts(library.items).join('') === 'The answer ', 'the first pieces on both streams');
    expect(sse.some((e) => e.event === 'message' && e.data.role === 'assistant')).toBe(false);
    expect(library.items.some((e) => e.type === 'message' && e.message.role === 'assistant')).toBe(false);
    model.rest.resolve();
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: pieces.join('') });
    const { ended } = await reading;
    expect(ended).toBe(true);
    await eventually(() => library.state.completed, 'events() completes');

    const published = (await runtime.messages(operationId)).find((m) => m.role === 'assistant')!.content;
    expect(sseDeltaTexts(sse).join('')).toBe(published);
    expect(deltaTexts(library.items).join('')).toBe(published);
    // No id: a delta is never replayed; the step index is the answer's step.
    for (const event of sse.filter((e) => e.event === 'delta')) {
      expect(event.id).toBeUndefined();
      expect(Object.keys(event.data).sort()).toEqual(['stepIndex', 'text']);
      expect(event.data.stepIndex).toBe(0);
    }
    // Every delta came before the message that holds the whole text.
    const order = sse.map((e) => (e.event === 'message' ? `message:${e.data.role}` : e.event)).filter((e) => e === 'delta' || e === 'message:assistant');
    expect(order.lastIndexOf('delta')).toBeLessThan(order.indexOf('message:assistant'));
    expect(llm.calls.at(-1)!.body.stream).toBe(true);
    library.stop();
  }, 30_000);

  it('K5: a denied answer never reaches a stream — with an afterModelCall control, nothing goes out until the decision, then the reason in one delta', async () => {
    const pieces = ['secret ', 'plan ', 'details'];
    scriptedStream(llm, pieces, 1).start.resolve();
    const decided = deferred();
    const decide = deferred<'deny'>();
    const { operationId, done } = await runtime.execAgent({
      agentId: 'writer',
      prompt: 'leak it',
      ownerId: OWNER,
      hooks: [
        {
          id: 'output-guard',
          type: 'afterModelCall',
          handler: async () => {
            decided.resolve();
            await decide.promise;
            return { decision: 'deny', reason: 'leaks the plan' };
          },
        },
      ],
    });
    const { sse, reading, library } = await watch(operationId);
    // The model answered and the guard is deciding: nothing of the answer is out.
    await within(decided.promise, 'the guard is asked');
    expect(sseDeltaTexts(sse)).toEqual([]);
    expect(deltaTexts(library.items)).toEqual([]);
    decide.resolve('deny');
    expect(await within(done, 'done')).toMatchObject({ reason: 'blocked', content: 'leaks the plan' });
    await reading;
    await eventually(() => library.state.completed, 'events() completes');
    for (const texts of [sseDeltaTexts(sse), deltaTexts(library.items)]) {
      expect(texts).toEqual(['leaks the plan']);
      expect(texts.join('')).not.toMatch(/secret|plan details/);
    }
    expect(JSON.stringify(sse)).not.toContain('secret');
    // Held: the provider was not even asked to stream.
    expect(llm.calls.at(-1)!.body.stream).toBeUndefined();
    library.stop();
  }, 30_000);

  it('K5: an allowed answer under an output guard goes out after the decision in one delta, before its message', async () => {
    const start = deferred();
    llm.handle((_call, res) => void start.promise.then(() => sendJson(res, 200, completion({ content: 'all of it' }))));
    const { operationId, done } = await runtime.execAgent({ agentId: 'writer', prompt: 'fine', ownerId: OWNER, hooks: [{ id: 'allow', type: 'afterModelCall', handler: () => undefined }] });
    const library = record(runtime.events(operationId));
    await eventually(() => library.items.some((e) => e.type === 'message'), 'events() read the operation');
    start.resolve();
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: 'all of it' });
    await eventually(() => library.state.completed, 'events() completes');
    const kinds = library.items.map((e) => (e.type === 'message' ? `message:${e.message.role}` : e.type)).filter((k) => k !== 'status');
    expect(kinds).toEqual(['message:user', 'delta', 'message:assistant']);
    expect(deltaTexts(library.items)).toEqual(['all of it']);
  }, 30_000);

  it('K5/K4: an attempt cut mid-stream is retried; what was sent is not sent again, and the deltas still concatenate to the content', async () => {
    let attempt = 0;
    const start = deferred();
    llm.handle((_call, res) => {
      void start.promise.then(() => {
        const stream = openStream(res);
        attempt++;
        stream.send(chunk({ content: 'Hello' }));
        if (attempt === 1) return stream.end(false); // cut before the answer finished: a network error, retried
        stream.send(chunk({ content: ', world' }));
        stream.send(chunk({}, 'stop'));
        stream.end();
      });
    });
    const { operationId, done } = await runtime.execAgent({ agentId: 'writer', prompt: 'again', ownerId: OWNER });
    const library = record(runtime.events(operationId));
    await eventually(() => library.items.some((e) => e.type === 'message'), 'events() read the operation');
    start.resolve();
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: 'Hello, world' });
    await eventually(() => library.state.completed, 'events() completes');
    expect(attempt).toBe(2);
    // The retry wrote "Hello" again: it was sent once.
    expect(deltaTexts(library.items)).toEqual(['Hello', ', world']);
  }, 30_000);
});

@Injectable()
class Redactor {
  @OnHook('after_model_response', { id: 'redact' })
  redact(invocation: HookInvocation<ModelResponseContext>): ModelResponseContext {
    return invocation.payload.withContent(invocation.payload.content.replaceAll('4111-1111-1111-1111', '[CARD]'));
  }
}

describeEach('K5 with an after_model_response transform on %s', (driver) => {
  it('K5: the transformed content goes out in one delta; the model text before the transform never does', async () => {
    const llm = await startChatCompletionsServer();
    process.env.K5_LLM_BASE = llm.baseUrl;
    const start = deferred();
    llm.handle((call, res) => void start.promise.then(() => (call.body.stream ? res.destroy() : sendJson(res, 200, completion({ content: 'card 4111-1111-1111-1111 charged' })))));
    const app = await bootRuntime({ config: CONFIG, providers: [Redactor], observe: false, database: databaseFor(driver, 'transform') });
    try {
      const { operationId, done } = await app.runtime.execAgent({ agentId: 'writer', prompt: 'charge' });
      const library = record(app.runtime.events(operationId));
      await eventually(() => library.items.some((e) => e.type === 'message'), 'events() read the operation');
      start.resolve();
      expect(await within(done, 'done')).toMatchObject({ content: 'card [CARD] charged' });
      await eventually(() => library.state.completed, 'events() completes');
      expect(deltaTexts(library.items)).toEqual(['card [CARD] charged']);
      expect(JSON.stringify(library.items)).not.toContain('4111');
    } finally {
      await app.close();
      await llm.close();
    }
  }, 30_000);
});
