/**
 * DESIGN §7 `GET /v1/events` on the built server (issue 17 item 3: the list "updates live"): one stream of
 * the changes to all of the caller's operations — created, waiting, completed — never another owner's, 401
 * without a key; and on PostgreSQL an operation created and run by another server process on the same
 * database reaches the stream (LISTEN/NOTIFY), so a console sees work it did not start.
 */
import { dropSchema, postgresDatabaseOption, postgresSuite, uniqueSchemaName } from '../integration/persistence/test-databases.js';
import { scratch, type Scratch } from './support/e2e-config.js';
import { apiClient, expectErrorShape, until, type ApiClient } from './support/http-client.js';
import { ensureBuilt, startServer, type ServerProcess } from './support/server-process.js';
import { watchEvents, type SseEvent } from './support/sse.js';

const ALICE_KEY = 'alice-key-events-5e1d';
const BOB_KEY = 'bob-key-events-0c9a';
const KEYS = { AGENT_HOOKS_API_KEYS: `${ALICE_KEY}:alice, ${BOB_KEY}:bob` };

/** Opens `GET /v1/events` as `key`; resolves once the server sent the headers (the stream follows from then on). */
async function openEvents(server: ServerProcess, key: string, until: (event: SseEvent) => boolean) {
  const abort = new AbortController();
  const response = await fetch(`${server.url}/v1/events`, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' }, signal: abort.signal });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const watch = watchEvents(response, until, 30_000);
  return { ...watch, close: () => abort.abort() };
}

const isOperation = (id: string, status: string) => (event: SseEvent) => event.event === 'operation' && event.data.operationId === id && event.data.status === status;

describe('DESIGN §7 GET /v1/events on SQLite', () => {
  let dir: Scratch;
  let server: ServerProcess;
  let alice: ApiClient;
  let bob: ApiClient;

  beforeAll(async () => {
    ensureBuilt();
    dir = scratch('caller-events');
    server = await startServer({ config: dir.config, plugins: dir.plugins, database: dir.database('events'), env: KEYS });
    alice = apiClient(server.url, ALICE_KEY);
    bob = apiClient(server.url, BOB_KEY);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    dir?.remove();
  });

  it("DESIGN §7 /v1/events: the caller's operations arrive as list items as they are created, wait and complete; another owner's never do", async () => {
    let aliceId = '';
    const stream = await openEvents(server, ALICE_KEY, (event) => isOperation(aliceId, 'completed')(event));
    try {
      // Bob's operation runs to its end before Alice's completes: were it ever sent, it would come first.
      const bobs = await bob.post('/v1/operations', { agentId: 'assistant', prompt: 'What time is it?' });
      await until(() => bob.get(`/v1/operations/${bobs.body.operationId}`), (reply) => reply.body?.status === 'completed', "bob's operation");
      const created = await alice.post('/v1/operations', { agentId: 'approver', prompt: 'What time is it?' });
      aliceId = created.body.operationId as string;
      const waiting = await until(() => alice.get(`/v1/operations/${aliceId}`), (reply) => reply.body?.status === 'waiting', 'the approval wait');
      const decided = await alice.post(`/v1/operations/${aliceId}/interventions/${waiting.body.pendingTools[0].toolCallId}`, { action: 'approve' });
      expect(decided.status).toBe(200);
      await stream.seen;
    } finally {
      stream.close();
    }
    const { events } = await stream.reading;
    const operations = events.filter((event) => event.event === 'operation');
    expect(operations.every((event) => event.data.operationId === aliceId)).toBe(true);
    expect(operations.map((event) => event.data.status)).toEqual(expect.arrayContaining(['waiting', 'completed']));
    const last = operations.at(-1)!.data;
    // The list item's shape (GET /v1/operations), as it stands after the run.
    expect(last).toEqual(expect.objectContaining({ operationId: aliceId, agentId: 'approver', status: 'completed', reason: 'done', steps: 2 }));
    const listed = await alice.get('/v1/operations?limit=1');
    expect(listed.body.items[0]).toEqual(last);
  }, 60_000);

  it('DESIGN §7 /v1/events: no key or a wrong key is 401, and nothing streams', async () => {
    expectErrorShape(await apiClient(server.url).get('/v1/events'), 401, 'unauthorized');
    expectErrorShape(await apiClient(server.url, 'not-a-key').get('/v1/events'), 401, 'unauthorized');
  });

  it('is in the OpenAPI document', async () => {
    const docs = await alice.get('/docs-json');
    expect(docs.body.paths['/v1/events'].get).toBeDefined();
  });
});

const describeOnPostgres = await postgresSuite('e2e/caller-events.spec.ts', 'the caller-wide event stream across two server processes');

describeOnPostgres('DESIGN §4/§7 GET /v1/events across server processes (PostgreSQL)', () => {
  const schema = uniqueSchemaName();
  const database = postgresDatabaseOption(schema);
  let dir: Scratch;
  let watching: ServerProcess;
  let working: ServerProcess;

  beforeAll(async () => {
    ensureBuilt();
    dir = scratch('caller-events-pg');
    // One after the other: the first migrates the schema.
    watching = await startServer({ config: dir.config, plugins: dir.plugins, database, env: KEYS });
    working = await startServer({ config: dir.config, plugins: dir.plugins, database, env: KEYS });
  }, 180_000);

  afterAll(async () => {
    await Promise.all([watching?.stop(), working?.stop()]);
    await dropSchema(schema);
    dir?.remove();
  }, 60_000);

  it('DESIGN §4 events: an operation created and completed by another server process reaches the caller stream of this one', async () => {
    let id = '';
    const stream = await openEvents(watching, ALICE_KEY, (event) => isOperation(id, 'completed')(event));
    try {
      const created = await apiClient(working.url, ALICE_KEY).post('/v1/operations', { agentId: 'assistant', prompt: 'What time is it?' });
      expect(created.status).toBe(201);
      id = created.body.operationId as string;
      await stream.seen;
    } finally {
      stream.close();
    }
    const { events } = await stream.reading;
    expect(events.filter((event) => event.event === 'operation').every((event) => event.data.operationId === id)).toBe(true);
  }, 60_000);
});
