/**
 * DESIGN §7 `GET /v1/operations` on the built server with API keys, on a SQLite file and on PostgreSQL:
 * the caller's own operations only (never another key's, not even through a cursor), newest first,
 * filters `status` and `agentId`, keyset pages that visit every operation exactly once while operations
 * are started between (and during) page reads, G6 bounds on the query (400 naming the field, never
 * echoing it), and the path in the OpenAPI document.
 */
import { ensureBuilt, startServer, type ServerProcess } from './support/server-process.js';
import { scratch, type Scratch } from './support/e2e-config.js';
import { apiClient, expectErrorShape, until, type ApiClient, type Reply } from './support/http-client.js';
import { appDatabases, type DriverName } from '../integration/persistence/test-databases.js';

const KEYS = { alice: 'list-alice-key-3c9e', bob: 'list-bob-key-81fa', carol: 'list-carol-key-0d57' } as const;
const ITEM_FIELDS = ['operationId', 'agentId', 'status', 'reason', 'createdAt', 'updatedAt', 'steps', 'usage'];

interface Item {
  operationId: string;
  agentId: string;
  status: string;
  reason?: string;
  createdAt: string;
  updatedAt: string;
  steps: number;
  usage: { inputTokens: number; outputTokens: number; costUsd: number };
}

interface Page {
  items: Item[];
  nextCursor?: string;
}

/** The list order: createdAt, then operationId, both descending. */
const newestFirst = (a: Item, b: Item): number =>
  a.createdAt === b.createdAt ? (a.operationId < b.operationId ? 1 : a.operationId > b.operationId ? -1 : 0) : a.createdAt < b.createdAt ? 1 : -1;

const databases = await appDatabases('list-e2e');

databases.describeEach('DESIGN §7 GET /v1/operations on %s', (driver: DriverName) => {
  let dir: Scratch;
  let server: ServerProcess;
  let alice: ApiClient;
  let bob: ApiClient;
  let carol: ApiClient;

  beforeAll(async () => {
    ensureBuilt();
    dir = scratch(`http-list-${driver}`);
    server = await startServer({
      config: dir.config,
      plugins: dir.plugins,
      database: databases.databaseFor(driver, 'list'),
      env: { AGENT_HOOKS_API_KEYS: `${KEYS.alice}:alice, ${KEYS.bob}:bob, ${KEYS.carol}:carol` },
    });
    alice = apiClient(server.url, KEYS.alice);
    bob = apiClient(server.url, KEYS.bob);
    carol = apiClient(server.url, KEYS.carol);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    dir?.remove();
  });

  const start = async (client: ApiClient, agentId: string): Promise<string> => {
    const created = await client.post('/v1/operations', { agentId, prompt: 'What time is it?' });
    expect(created.status).toBe(201);
    return created.body.operationId as string;
  };
  const list = (client: ApiClient, query = ''): Promise<Reply<Page>> => client.get(`/v1/operations${query ? `?${query}` : ''}`);
  /** Every page until nextCursor is absent; `during` runs alongside each page read after the first. */
  const allPages = async (client: ApiClient, query: string, during: () => Promise<unknown> = async () => {}): Promise<Item[]> => {
    const seen: Item[] = [];
    let cursor: string | undefined;
    for (let pages = 0; ; pages++) {
      const path = `${query}${cursor ? `&cursor=${cursor}` : ''}`;
      const [reply] = await Promise.all([list(client, path), pages > 0 ? during() : undefined]);
      expect(reply.status).toBe(200);
      seen.push(...reply.body.items);
      if (reply.body.nextCursor === undefined) return seen;
      cursor = reply.body.nextCursor;
    }
  };

  it("DESIGN §7 list: only the caller's own operations, newest first — another key's never appear, not even through a cursor", async () => {
    const mine: string[] = [];
    for (let i = 0; i < 3; i++) mine.push(await start(alice, 'assistant'));
    const theirs = [await start(bob, 'assistant'), await start(bob, 'assistant')];

    const reply = await list(alice);
    expect(reply.status).toBe(200);
    expect(reply.body.nextCursor).toBeUndefined();
    const ids = reply.body.items.map((item) => item.operationId);
    expect([...ids].sort()).toEqual([...mine].sort());
    expect(reply.body.items).toEqual([...reply.body.items].sort(newestFirst));

    // Bob's cursor in Alice's hands moves only through Alice's operations, and the other way round.
    const bobFirst = await list(bob, 'limit=1');
    expect(bobFirst.body.items).toHaveLength(1);
    expect(theirs).toContain(bobFirst.body.items[0]!.operationId);
    const aliceFirst = await list(alice, 'limit=1');
    for (const [client, cursor, own] of [
      [alice, bobFirst.body.nextCursor!, mine],
      [bob, aliceFirst.body.nextCursor!, theirs],
    ] as const) {
      const pages = await list(client, `limit=200&cursor=${cursor}`);
      expect(pages.status).toBe(200);
      expect(pages.body.items.every((item) => own.includes(item.operationId))).toBe(true);
    }
    expect((await list(bob)).body.items.map((item) => item.operationId).sort()).toEqual([...theirs].sort());
    expectErrorShape(await list(apiClient(server.url)), 401, 'unauthorized');
  });

  it('DESIGN §7 list: each item is { operationId, agentId, status, reason?, createdAt, updatedAt, steps, usage }, nothing more', async () => {
    const id = await start(alice, 'assistant');
    const done = await until(() => alice.get(`/v1/operations/${id}`), (r) => r.body?.status === 'completed', `operation ${id}`);
    const item = (await list(alice)).body.items.find((candidate) => candidate.operationId === id)!;
    expect(Object.keys(item).every((key) => ITEM_FIELDS.includes(key))).toBe(true);
    expect(item).toEqual({
      operationId: id,
      agentId: 'assistant',
      status: 'completed',
      reason: 'done',
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      updatedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      // The scripted model asks for clock/now, then answers: two steps.
      steps: 2,
      usage: done.body.usage,
    });
    expect(item.updatedAt >= item.createdAt).toBe(true);
  });

  it('DESIGN §7 list: filters status and agentId, alone and together', async () => {
    const waiting = await start(bob, 'approver');
    await until(() => bob.get(`/v1/operations/${waiting}`), (r) => r.body?.status === 'waiting', 'approval wait');
    const deferring = await start(bob, 'deferring');
    await until(() => bob.get(`/v1/operations/${deferring}`), (r) => r.body?.status === 'waiting', 'deferred wait');
    const all = (await list(bob, 'limit=200')).body.items;

    const byStatus = (await list(bob, 'status=waiting&limit=200')).body.items;
    expect(byStatus.map((item) => item.operationId).sort()).toEqual(all.filter((item) => item.status === 'waiting').map((item) => item.operationId).sort());
    expect(byStatus.map((item) => item.operationId)).toEqual(expect.arrayContaining([waiting, deferring]));
    const byAgent = (await list(bob, 'agentId=approver')).body.items;
    expect(byAgent.map((item) => item.operationId)).toEqual([waiting]);
    expect((await list(bob, 'agentId=approver&status=completed')).body.items).toEqual([]);
    expect((await list(bob, 'agentId=assistant&status=completed')).body.items.every((item) => item.agentId === 'assistant' && item.status === 'completed')).toBe(true);
    expect((await list(bob, 'agentId=nobody')).body.items).toEqual([]);
  });

  it('DESIGN §7 list: paging visits every operation exactly once while operations are started between and during page reads', async () => {
    const before: string[] = [];
    for (let i = 0; i < 12; i++) before.push(await start(carol, i % 2 === 0 ? 'assistant' : 'approver'));
    const startedMeanwhile: string[] = [];
    const seen = await allPages(carol, 'limit=5', async () => {
      // Carol's own newer operations and another owner's race the page read.
      const [own] = await Promise.all([start(carol, 'assistant'), start(alice, 'assistant')]);
      startedMeanwhile.push(own);
    });
    const ids = seen.map((item) => item.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => before.includes(id)).sort()).toEqual([...before].sort());
    // Only Carol's: the twelve, and at most those she started while paging.
    expect(ids.every((id) => before.includes(id) || startedMeanwhile.includes(id))).toBe(true);
    expect(seen).toEqual([...seen].sort(newestFirst));
    expect(startedMeanwhile.length).toBeGreaterThanOrEqual(2);
  });

  it('G6 list: limit 0, 201, a non-number, an unknown status, a repeated or malformed cursor → 400 naming the field, never echoing it', async () => {
    const bad: [query: string, field: string, raw?: string][] = [
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=abcxyz', 'limit', 'abcxyz'],
      ['limit=77777', 'limit', '77777'],
      ['limit=', 'limit'],
      ['limit=5&limit=6', 'limit'],
      ['status=bogus-status', 'status', 'bogus-status'],
      ['status=running&status=waiting', 'status'],
      [`agentId=${'a'.repeat(300)}`, 'agentId', 'a'.repeat(300)],
      ['agentId=%00x', 'agentId'],
      ['cursor=tampered-cursor-xyz', 'cursor', 'tampered-cursor-xyz'],
      ['cursor=%21%21%21', 'cursor'],
      [`cursor=${Buffer.from('["not-a-time","x"]').toString('base64url')}`, 'cursor', 'not-a-time'],
      [`cursor=${Buffer.from('{"createdAt":1}').toString('base64url')}`, 'cursor'],
      [`cursor=${Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', "x' OR '1'='1"])).toString('base64url')}=`, 'cursor'],
      [`cursor=${'A'.repeat(5000)}`, 'cursor'],
    ];
    for (const [query, field, raw] of bad) {
      const reply: Reply<{ error: { code: string; message: string } }> = await alice.get(`/v1/operations?${query}`);
      expectErrorShape(reply, 400, 'invalid_request');
      expect(reply.body.error.message).toMatch(new RegExp(`^${field}: `));
      if (raw !== undefined) expect(reply.body.error.message).not.toContain(raw);
    }
    for (const limit of [1, 200]) expect((await list(alice, `limit=${limit}`)).status).toBe(200);
    // A well-formed cursor this server could have issued but did not is only a place in the order.
    const elsewhere = Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', "x' OR '1'='1"])).toString('base64url');
    expect(await list(alice, `cursor=${elsewhere}`)).toMatchObject({ status: 200, body: { items: [] } });
    // The server keeps answering.
    expect((await apiClient(server.url).get('/healthz')).status).toBe(200);
  });

  it('DESIGN §7 list: /docs lists GET /v1/operations with its query parameters and response', async () => {
    const docs = await apiClient(server.url).get('/docs-json');
    const get = docs.body.paths['/v1/operations'].get;
    expect(get.parameters.map((parameter: { name: string; in: string }) => `${parameter.in}:${parameter.name}`).sort()).toEqual(['query:agentId', 'query:cursor', 'query:limit', 'query:status']);
    expect(get.parameters.find((parameter: { name: string }) => parameter.name === 'limit').schema).toMatchObject({ minimum: 1, maximum: 200 });
    const schema = get.responses['200'].content['application/json'].schema;
    expect(schema.properties.items.items.required).toEqual(['operationId', 'agentId', 'status', 'createdAt', 'updatedAt', 'steps', 'usage']);
    expect(Object.keys(schema.properties)).toEqual(['items', 'nextCursor']);
    expect(Object.keys(get.responses)).toEqual(expect.arrayContaining(['200', '400', '401']));
  });
});
