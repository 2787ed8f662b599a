/**
 * DESIGN §12 "Reading operations in a host app" and SPEC G9, on a real SQLite file and PostgreSQL: the read
 * methods of `AgentRuntime` answer in the HTTP API's shapes (DESIGN §7): `get`, `list` (owner, status and
 * agent filters, keyset pages, a tampered cursor refused), `messages` (after a seq), `timeline`, `events`
 * (status and message events, completing at the end) and `changes` (an owner's changes only, also those a
 * second app on the same PostgreSQL schema makes); before `app.init()` each throws `RuntimeNotReadyError`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import {
  AgentHooksModule,
  InvalidListQueryError,
  RunContext,
  RuntimeNotReadyError,
  UnknownOperationError,
  type OperationChange,
  type OperationEvent,
} from '../../../src/index.js';
import { AgentRuntime } from '../../../src/runtime/agent-runtime.js';
import { appDatabases, postgresSuite } from '../persistence/test-databases.js';
import { bootRuntime, eventually, guardUnhandledRejections, within, type RuntimeApp } from './runtime-test-kit.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';
import { record } from '../../support/record.js';

guardUnhandledRejections();

const CONFIG = scriptedConfig({
  system: 'read-api',
  models: {
    quick: [answer('done')],
    asking: [toolCalls(call('ext/ask', { q: 'name?' })), answer('got {{lastToolResult}}')],
  },
  clientTools: { 'ext/ask': { description: 'asks the person at the client', parameters: { type: 'object', properties: { q: { type: 'string' } } } } },
  agents: {
    quick: { model: 'quick', tools: [] },
    asker: { model: 'asking', tools: ['ext/*'] },
  },
});

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

async function completed(app: RuntimeApp, operationId: string): Promise<void> {
  await within(app.runtime.result(operationId), `operation ${operationId}`, 20_000);
}

const { describeEach, databaseFor } = await appDatabases('read-api');

describeEach('DESIGN §12 read API on %s', (driver) => {
  let app: RuntimeApp;

  beforeAll(async () => {
    app = await bootRuntime({ observe: true, config: CONFIG, database: databaseFor(driver, 'reads') });
  }, 30_000);

  afterAll(async () => {
    await app?.close();
  });

  it("DESIGN §12 read API: get() is GET /v1/operations/:id's view (pending tools while waiting), null for an unknown id", async () => {
    const { operationId } = await app.runtime.execAgent({ agentId: 'asker', prompt: 'who?', ownerId: 'get-owner' });
    await eventually(async () => (await app.runtime.get(operationId))?.status === 'waiting', 'waiting');
    const waiting = await app.runtime.get(operationId);
    expect(waiting).toEqual({
      operationId,
      agentId: 'asker',
      status: 'waiting',
      pendingTools: [{ toolCallId: expect.any(String), identifier: 'ext', apiName: 'ask', args: { q: 'name?' }, kind: 'deferred', idempotencyKey: expect.stringMatching(/^nah_/) }],
      usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number), costUsd: 0 },
    });
    await app.runtime.completeDeferred(operationId, waiting!.pendingTools![0]!.toolCallId, { content: 'Ada' });
    await completed(app, operationId);
    expect(await app.runtime.get(operationId)).toEqual({
      operationId,
      agentId: 'asker',
      status: 'completed',
      reason: 'done',
      usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number), costUsd: 0 },
    });
    expect(await app.runtime.get(UNKNOWN_ID)).toBeNull();
    expect(await app.runtime.get('not-an-operation-id')).toBeNull();
  });

  it('G9: list() filters by owner — execAgent({ ownerId }), else context.userId, else none (listed only without an owner filter) — by status and agent, newest first', async () => {
    const owned = await app.runtime.execAgent({ agentId: 'quick', prompt: 'a', ownerId: 'list-alice' });
    const byUser = await app.runtime.execAgent({ agentId: 'quick', prompt: 'b', context: new RunContext({ runId: 'x', userId: 'list-bob', metadata: {} }) });
    const both = await app.runtime.execAgent({ agentId: 'quick', prompt: 'c', ownerId: 'list-alice', context: new RunContext({ runId: 'x', userId: 'list-bob', metadata: {} }) });
    const nobody = await app.runtime.execAgent({ agentId: 'quick', prompt: 'd' });
    for (const { operationId } of [owned, byUser, both, nobody]) await completed(app, operationId);

    const alice = await app.runtime.list({ ownerId: 'list-alice' });
    expect(alice.items.map((item) => item.operationId)).toEqual([both.operationId, owned.operationId]);
    expect(alice.nextCursor).toBeUndefined();
    expect(alice.items[0]).toEqual({
      operationId: both.operationId,
      agentId: 'quick',
      status: 'completed',
      reason: 'done',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      steps: expect.any(Number),
      usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number), costUsd: 0 },
    });
    expect((await app.runtime.list({ ownerId: 'list-bob' })).items.map((item) => item.operationId)).toEqual([byUser.operationId]);
    const everyone = (await app.runtime.list({ limit: 200 })).items.map((item) => item.operationId);
    expect(everyone).toEqual(expect.arrayContaining([owned.operationId, byUser.operationId, both.operationId, nobody.operationId]));
    expect((await app.runtime.list({ ownerId: 'list-alice', status: 'running' })).items).toEqual([]);
    expect((await app.runtime.list({ ownerId: 'list-alice', status: 'completed', agentId: 'quick' })).items).toHaveLength(2);
    expect((await app.runtime.list({ ownerId: 'list-alice', agentId: 'asker' })).items).toEqual([]);
  });

  it("DESIGN §7 keyset paging: list() pages by nextCursor; a tampered cursor is InvalidListQueryError, another owner's cursor never reaches that owner's rows", async () => {
    const started: string[] = [];
    for (const prompt of ['1', '2', '3', '4', '5']) started.push((await app.runtime.execAgent({ agentId: 'quick', prompt, ownerId: 'page-carol' })).operationId);
    const dave = [(await app.runtime.execAgent({ agentId: 'quick', prompt: 'x', ownerId: 'page-dave' })).operationId, (await app.runtime.execAgent({ agentId: 'quick', prompt: 'y', ownerId: 'page-dave' })).operationId];
    for (const id of [...started, ...dave]) await completed(app, id);

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await app.runtime.list({ ownerId: 'page-carol', limit: 2, ...(cursor ? { cursor } : {}) });
      seen.push(...page.items.map((item) => item.operationId));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual([...started].reverse());

    const first = await app.runtime.list({ ownerId: 'page-carol', limit: 2 });
    const tampered = `${first.nextCursor!.slice(0, -2)}x`;
    const refused = await app.runtime.list({ ownerId: 'page-carol', cursor: tampered }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InvalidListQueryError);
    expect(refused).toMatchObject({ code: 'invalid_query', field: 'cursor' });
    expect((refused as Error).message).not.toContain(tampered);
    await expect(app.runtime.list({ cursor: 'bm90IGEgY3Vyc29y' })).rejects.toBeInstanceOf(InvalidListQueryError);
    await expect(app.runtime.list({ limit: 0 })).rejects.toMatchObject({ field: 'limit' });
    await expect(app.runtime.list({ limit: 201 })).rejects.toMatchObject({ field: 'limit' });
    await expect(app.runtime.list({ status: 'paused' as never })).rejects.toMatchObject({ field: 'status' });

    // Dave's cursor is only a place in the order: under Carol's filter it yields Carol's rows only.
    const davesCursor = (await app.runtime.list({ ownerId: 'page-dave', limit: 1 })).nextCursor!;
    const underCarol = await app.runtime.list({ ownerId: 'page-carol', cursor: davesCursor, limit: 200 });
    expect(underCarol.items.every((item) => started.includes(item.operationId))).toBe(true);
    expect(underCarol.items.map((item) => item.operationId)).not.toContain(dave[0]);
  });

  it('DESIGN §12 read API: messages() is GET …/messages\' array, only those after afterSeq when given; timeline() is GET …/timeline\'s items', async () => {
    const { operationId } = await app.runtime.execAgent({ agentId: 'quick', prompt: 'hello', hooks: [{ id: 'seen', type: 'onComplete', handler: () => undefined }] });
    await completed(app, operationId);
    const messages = await app.runtime.messages(operationId);
    expect(messages).toEqual([
      { id: expect.any(String), role: 'user', content: 'hello' },
      { id: expect.any(String), role: 'assistant', content: 'done' },
    ]);
    expect(await app.runtime.messages(operationId, { afterSeq: 1 })).toEqual([messages[1]]);
    expect(await app.runtime.messages(operationId, { afterSeq: 2 })).toEqual([]);
    await expect(app.runtime.messages(UNKNOWN_ID)).rejects.toBeInstanceOf(UnknownOperationError);

    const timeline = await app.runtime.timeline(operationId);
    const seen = timeline.find((item) => item.hookId === 'seen');
    expect(seen).toEqual({ seq: expect.any(Number), at: expect.any(String), point: 'onComplete', hookId: 'seen', source: 'caller', outcome: expect.any(String), latencyMs: expect.any(Number) });
    expect(timeline.map((item) => item.seq)).toEqual(timeline.map((_, index) => index + 1));
    await expect(app.runtime.timeline(UNKNOWN_ID)).rejects.toBeInstanceOf(UnknownOperationError);
  });

  it('DESIGN §12 read API: events() emits message and status events as they happen and completes after the completed status', async () => {
    const { operationId } = await app.runtime.execAgent({ agentId: 'asker', prompt: 'who?' });
    const events = record(app.runtime.events(operationId));
    try {
      await eventually(() => events.items.some((e) => e.type === 'status' && e.operation.status === 'waiting'), 'the waiting status');
      expect(events.state.completed).toBe(false);
      const waiting = events.items.find((e): e is Extract<OperationEvent, { type: 'status' }> => e.type === 'status' && e.operation.status === 'waiting')!;
      await app.runtime.completeDeferred(operationId, waiting.operation.pendingTools![0]!.toolCallId, { content: 'Ada' });
      await eventually(() => events.state.completed, 'events() completes');
      expect(events.state.error).toBeUndefined();
      const messages = events.items.filter((e): e is Extract<OperationEvent, { type: 'message' }> => e.type === 'message');
      expect(messages.map((e) => e.message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
      expect(messages.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      // The same views as the other reads: one mapping.
      expect(messages.map((e) => e.message)).toEqual(await app.runtime.messages(operationId));
      const last = events.items.at(-1)!;
      expect(last).toEqual({ type: 'status', operation: await app.runtime.get(operationId) });
      expect(last.type === 'status' && last.operation.reason).toBe('done');
    } finally {
      events.stop();
    }
    const unknown = record(app.runtime.events(UNKNOWN_ID));
    await eventually(() => unknown.state.error !== undefined, 'events() of an unknown operation errors');
    expect(unknown.state.error).toBeInstanceOf(UnknownOperationError);
  });

  it("G9: changes({ ownerId }) emits the owner's created and changed operations as list items, never another owner's", async () => {
    const changes = record(app.runtime.changes({ ownerId: 'changes-erin' }));
    try {
      // Frank's operation ends before Erin's starts: had its changes been let through, they would come first.
      const frank = await app.runtime.execAgent({ agentId: 'quick', prompt: 'f', ownerId: 'changes-frank' });
      await completed(app, frank.operationId);
      const erin = await app.runtime.execAgent({ agentId: 'quick', prompt: 'e', ownerId: 'changes-erin' });
      await completed(app, erin.operationId);
      const isDone = (change: OperationChange) => change.type === 'operation' && change.operation.operationId === erin.operationId && change.operation.status === 'completed';
      await eventually(() => changes.items.some(isDone), "erin's completed operation");
      const ids = changes.items.flatMap((change) => (change.type === 'operation' ? [change.operation.operationId] : []));
      expect(new Set(ids)).toEqual(new Set([erin.operationId]));
      const [item] = (await app.runtime.list({ ownerId: 'changes-erin' })).items;
      expect(changes.items.filter(isDone).at(-1)).toEqual({ type: 'operation', operation: item });
      expect(changes.state.completed).toBe(false);
    } finally {
      changes.stop();
    }
  });
});

const describeOnPostgres = await postgresSuite('runtime/read-api.spec.ts', 'changes() and events() across two apps on one PostgreSQL schema');

describeOnPostgres('G9 read API across processes (two apps on one PostgreSQL schema)', () => {
  it("G9: changes({ ownerId }) in one app sees the owner's operation a second app starts and finishes, never another owner's; events() follows it to the end", async () => {
    const database = databaseFor('postgres', 'two-apps');
    const watcher = await bootRuntime({ observe: true, config: CONFIG, database });
    let starter: RuntimeApp | undefined;
    try {
      await watcher.runtime.list({ limit: 1 }); // opens (and migrates) the shared schema first
      starter = await bootRuntime({ observe: true, config: CONFIG, database });
      const changes = record(watcher.runtime.changes({ ownerId: 'two-apps-gina' }));
      try {
        const gina = await starter.runtime.execAgent({ agentId: 'asker', prompt: 'who?', ownerId: 'two-apps-gina' });
        const hank = await starter.runtime.execAgent({ agentId: 'quick', prompt: 'h', ownerId: 'two-apps-hank' });
        await eventually(() => changes.items.some((c) => c.type === 'operation' && c.operation.operationId === gina.operationId), "gina's operation, seen by the other app");
        // Hank's operation ends before Gina's does: its commits come first on the database's one channel.
        await completed(starter, hank.operationId);
        const events = record(watcher.runtime.events(gina.operationId));
        const pending = await eventually(async () => (await watcher.runtime.get(gina.operationId))?.status === 'waiting', 'waiting').then(() => watcher.runtime.get(gina.operationId));
        await starter.runtime.completeDeferred(gina.operationId, pending!.pendingTools![0]!.toolCallId, { content: 'Gina' });
        await eventually(() => events.state.completed, "events() of the other app's operation completes", 20_000);
        expect(events.items.at(-1)).toMatchObject({ type: 'status', operation: { status: 'completed', reason: 'done' } });
        await eventually(
          () => changes.items.some((c) => c.type === 'operation' && c.operation.operationId === gina.operationId && c.operation.status === 'completed'),
          "gina's completion, seen by the other app",
          20_000,
        );
        // So, had Hank's changes been let through, they would be here by now.
        const ids = changes.items.flatMap((c) => (c.type === 'operation' ? [c.operation.operationId] : []));
        expect(ids).not.toContain(hank.operationId);
        expect(new Set(ids)).toEqual(new Set([gina.operationId]));
      } finally {
        changes.stop();
      }
    } finally {
      await starter?.close();
      await watcher.close();
    }
  }, 60_000);
});

describe('DESIGN §12 read API before app.init()', () => {
  it('every read method throws RuntimeNotReadyError, as execAgent does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-hooks-read-ready-'));
    writeFileSync(join(dir, 'agents.yaml'), CONFIG);
    const moduleRef = await Test.createTestingModule({
      imports: [AgentHooksModule.forRoot({ configFile: join(dir, 'agents.yaml'), database: `sqlite:${join(dir, 'db.sqlite')}` })],
    }).compile();
    try {
      const runtime = moduleRef.get(AgentRuntime);
      await expect(runtime.get(UNKNOWN_ID)).rejects.toBeInstanceOf(RuntimeNotReadyError);
      await expect(runtime.list()).rejects.toBeInstanceOf(RuntimeNotReadyError);
      await expect(runtime.messages(UNKNOWN_ID)).rejects.toBeInstanceOf(RuntimeNotReadyError);
      await expect(runtime.timeline(UNKNOWN_ID)).rejects.toThrow(/app\.init\(\)/);
      expect(() => runtime.events(UNKNOWN_ID)).toThrow(RuntimeNotReadyError);
      expect(() => runtime.changes({ ownerId: 'x' })).toThrow(RuntimeNotReadyError);
      await moduleRef.init();
      expect(await runtime.get(UNKNOWN_ID)).toBeNull();
    } finally {
      await moduleRef.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
