/**
 * SPEC K5 in queue mode: the step runs in a real worker process; the API process (no workers of its own, the
 * HTTP API mounted) serves the watchers. The worker's deltas cross over Redis pub/sub — seen on the
 * operation's channel itself — and reach the API's SSE clients and `events()` while the model still writes;
 * a delta lost with the API's subscriber connection loses nothing (the committed message holds the text);
 * and an output guard the worker restores (a persisted afterModelCall webhook) keeps a denied answer off
 * every stream.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { AgentHooksHttpModule, AgentHooksModule } from '../../../src/index.js';
import { AgentRuntime } from '../../../src/runtime/agent-runtime.js';
import { ensureBuilt } from '../../e2e/support/server-process.js';
import { readEvents, type SseEvent } from '../../e2e/support/sse.js';
import { sendJson, startChatCompletionsServer, type ChatCompletionsServer } from '../models/chat-completions-server.js';
import { dropSchema, postgresDatabaseOption, uniqueSchemaName } from '../persistence/test-databases.js';
import { eventually, within } from '../runtime/runtime-test-kit.js';
import { REDIS_URL, dropPrefix, fastQueue, queueSuite, uniquePrefix } from './queue-kit.js';
import { startWorker, stopWorker, type WorkerProcess } from './worker-processes.js';
import { deltaTexts, scriptedStream, sseDeltaTexts } from '../models/scripted-stream.js';
import { record } from '../../support/record.js';

const describeWithServices = await queueSuite('queue/streaming.spec.ts', 'streaming (K5) across the worker and the API process');

const CONFIG = `
system: queue-streaming
models:
  remote: { provider: openai, model: gpt-test, baseUrlEnv: QK5_LLM_BASE, apiKeyEnv: QK5_LLM_KEY }
agents:
  writer: { model: remote }
`;
const OWNER = 'queue-stream-owner';
describeWithServices('K5 in queue mode', () => {
  const schema = uniqueSchemaName();
  const prefix = uniquePrefix();
  let dir: string;
  let llm: ChatCompletionsServer;
  let guard: Server;
  let app: NestExpressApplication;
  let runtime: AgentRuntime;
  let base: string;
  let worker: WorkerProcess;

  beforeAll(async () => {
    ensureBuilt();
    llm = await startChatCompletionsServer();
    guard = createServer((_req, res) => sendJson(res, 200, { decision: 'deny', reason: 'the guard refused it' }) as unknown as void);
    await new Promise<void>((resolve) => guard.listen(0, '127.0.0.1', resolve));
    dir = mkdtempSync(join(tmpdir(), 'agent-hooks-queue-streaming-'));
    writeFileSync(join(dir, 'agents.yaml'), CONFIG);
    const database = postgresDatabaseOption(schema);
    @Module({
      imports: [
        AgentHooksModule.forRoot({
          isGlobal: true,
          database,
          configFile: join(dir, 'agents.yaml'),
          mode: 'queue',
          redis: REDIS_URL,
          // The API process runs no step: every delta it serves comes from the worker process.
          queue: fastQueue(prefix, { worker: false }),
          webhooks: { allowNetworks: ['127.0.0.0/8'] },
        }),
        AgentHooksHttpModule.register({ path: 'agents', owner: () => OWNER, console: false }),
      ],
    })
    class ApiModule {}
    const moduleRef = await Test.createTestingModule({ imports: [ApiModule] }).compile();
    app = moduleRef.createNestApplication<NestExpressApplication>({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/agents`;
    runtime = app.get(AgentRuntime);
    worker = await startWorker(
      { configFile: join(dir, 'agents.yaml'), database, redis: REDIS_URL, queue: fastQueue(prefix), webhooks: { allowNetworks: ['127.0.0.0/8'] } },
      { QK5_LLM_BASE: llm.baseUrl, QK5_LLM_KEY: 'qk5-key' },
    );
  }, 240_000);

  afterAll(async () => {
    if (worker) await stopWorker(worker);
    await app?.close();
    await llm?.close();
    if (guard) await new Promise<void>((resolve) => guard.close(() => resolve()));
    await dropPrefix(prefix);
    await dropSchema(schema);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  async function watch(operationId: string) {
    const response = await fetch(`${base}/v1/operations/${operationId}/events`);
    expect(response.status).toBe(200);
    const sse: SseEvent[] = [];
    const reading = readEvents(response, 30_000, (event) => sse.push(event));
    const library = record(runtime.events(operationId));
    await eventually(() => sse.some((e) => e.event === 'message') && library.items.some((e) => e.type === 'message'), 'both watchers read the operation');
    return { sse, reading, library };
  }

  it("K5: a worker's deltas reach the API process's SSE clients and events() over Redis pub/sub while the model writes", async () => {
    const pieces = ['Across ', 'the ', 'queue ', 'it ', 'streams.'];
    const model = scriptedStream(llm, pieces, 3);
    const { operationId, done } = await runtime.execAgent({ agentId: 'writer', prompt: 'stream', ownerId: OWNER });
    // The operation's channel itself, as a third watcher: the deltas travel there (not on PostgreSQL).
    const tap = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const onChannel: string[] = [];
    tap.on('message', (_channel: string, message: string) => onChannel.push((JSON.parse(message) as { text: string }).text));
    await tap.subscribe(`${prefix}:deltas:${operationId}`);
    try {
      const { sse, reading, library } = await watch(operationId);
      model.start.resolve();
      await eventually(() => sseDeltaTexts(sse).join('') === 'Across the queue ' && deltaTexts(library.items).join('') === 'Across the queue ', 'the first pieces in the API process', 20_000);
      expect(sse.some((e) => e.event === 'message' && e.data.role === 'assistant')).toBe(false);
      model.rest.resolve();
      expect(await within(done, 'done', 30_000)).toMatchObject({ reason: 'done', content: pieces.join('') });
      expect((await reading).ended).toBe(true);
      await eventually(() => library.state.completed, 'events() completes');
      expect(sseDeltaTexts(sse).join('')).toBe(pieces.join(''));
      expect(deltaTexts(library.items).join('')).toBe(pieces.join(''));
      expect(sse.filter((e) => e.event === 'delta').every((e) => e.id === undefined && e.data.stepIndex === 0)).toBe(true);
      expect(onChannel.join('')).toBe(pieces.join(''));
      library.stop();
    } finally {
      tap.disconnect();
    }
  }, 60_000);

  it('K5: a delta lost with the API process\'s Redis subscription never loses the message', async () => {
    const pieces = ['Before ', 'the cut, ', 'after ', 'the cut.'];
    const model = scriptedStream(llm, pieces, 2);
    const { operationId, done } = await runtime.execAgent({ agentId: 'writer', prompt: 'cut', ownerId: OWNER });
    const { sse, reading, library } = await watch(operationId);
    model.start.resolve();
    await eventually(() => deltaTexts(library.items).join('') === 'Before the cut, ', 'the first pieces', 20_000);
    // Cut the API process's subscriber connection (by its name), then let the model finish at once.
    const admin = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      const clients = String(await admin.call('CLIENT', 'LIST'));
      const line = clients.split('\n').find((l) => l.includes(` name=${prefix}:deltas-subscriber `));
      expect(line).toBeDefined();
      await admin.call('CLIENT', 'KILL', 'ID', /\bid=(\d+)/.exec(line!)![1]!);
    } finally {
      admin.disconnect();
    }
    model.rest.resolve();
    expect(await within(done, 'done', 30_000)).toMatchObject({ reason: 'done', content: pieces.join('') });
    expect((await reading).ended).toBe(true);
    await eventually(() => library.state.completed, 'events() completes');
    // Whatever deltas were lost, both watchers hold the whole answer: the committed message.
    for (const messages of [sse.filter((e) => e.event === 'message').map((e) => e.data), library.items.flatMap((e) => (e.type === 'message' ? [e.message] : []))]) {
      expect(messages.find((m) => m.role === 'assistant')?.content).toBe(pieces.join(''));
    }
    expect(pieces.join('').startsWith(deltaTexts(library.items).slice(0, 2).join(''))).toBe(true);
    library.stop();
  }, 60_000);

  it('K5: an afterModelCall webhook the worker restores holds the answer; the denied answer never reaches the API process\'s streams', async () => {
    scriptedStream(llm, ['the ', 'secret ', 'plan'], 1).start.resolve();
    const guardUrl = `http://127.0.0.1:${(guard.address() as AddressInfo).port}/after`;
    const { operationId, done } = await runtime.execAgent({
      agentId: 'writer',
      prompt: 'leak',
      ownerId: OWNER,
      hooks: [{ id: 'guard', type: 'afterModelCall', webhook: { url: guardUrl, responseHandling: 'toolCall' } }],
    });
    const { sse, reading, library } = await watch(operationId);
    expect(await within(done, 'done', 30_000)).toMatchObject({ reason: 'blocked', content: 'the guard refused it' });
    await reading;
    await eventually(() => library.state.completed, 'events() completes');
    expect(JSON.stringify(sse)).not.toContain('secret');
    expect(JSON.stringify(library.items)).not.toContain('secret');
    // The worker held the answer: the provider was not asked to stream.
    expect(llm.calls.at(-1)!.body.stream).toBeUndefined();
    library.stop();
  }, 60_000);
});
