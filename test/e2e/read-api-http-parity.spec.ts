/**
 * DESIGN §12 "one mapping serves both": the built server (API keys for two owners) writes operations into a
 * SQLite file, and a library app on the same file reads them with `AgentRuntime`'s read API. Every answer
 * equals the HTTP API's body for the same owner — the view, a list page (its `nextCursor` works in both),
 * the messages and the timeline — and the library never shows another owner's operation under `ownerId`.
 */
import { ensureBuilt, startServer, type ServerProcess } from './support/server-process.js';
import { scratch, type Scratch } from './support/e2e-config.js';
import { apiClient, until, type ApiClient } from './support/http-client.js';
import { bootRuntime, type RuntimeApp } from '../integration/runtime/runtime-test-kit.js';
import { scriptedConfig } from '../support/scripted-config.js';

const ALICE_KEY = 'parity-alice-key-0123456789';
const BOB_KEY = 'parity-bob-key-0123456789';

/** The library app reads only: one agent so its config is valid, no tool the server's agents use. */
const READER_CONFIG = scriptedConfig({
  system: 'reader',
  models: {
    none: [],
  },
  agents: {
    idle: { model: 'none', tools: [] },
  },
});

let dir: Scratch;
let server: ServerProcess;
let reader: RuntimeApp;
let alice: ApiClient;
let bob: ApiClient;

beforeAll(async () => {
  ensureBuilt();
  dir = scratch('read-parity');
  server = await startServer({ config: dir.config, plugins: dir.plugins, database: dir.database('parity'), env: { AGENT_HOOKS_API_KEYS: `${ALICE_KEY}:alice, ${BOB_KEY}:bob` } });
  alice = apiClient(server.url, ALICE_KEY);
  bob = apiClient(server.url, BOB_KEY);
}, 120_000);

afterAll(async () => {
  await reader?.close();
  await server?.stop();
  dir?.remove();
});

const settled = (api: ApiClient, id: string, status: string) => until(() => api.get(`/v1/operations/${id}`), (r) => r.body?.status === status, `operation ${id} ${status}`);

describe('DESIGN §12 read API and the HTTP API: one mapping', () => {
  it('G9: get, list (and its cursor), messages and timeline in the library equal the HTTP bodies for the same owner', async () => {
    const done: string[] = [];
    for (const prompt of ['one', 'two', 'three']) done.push((await alice.post('/v1/operations', { agentId: 'assistant', prompt })).body.operationId);
    const waiting = (await alice.post('/v1/operations', { agentId: 'deferring', prompt: 'four' })).body.operationId as string;
    const bobs = (await bob.post('/v1/operations', { agentId: 'assistant', prompt: 'bob' })).body.operationId as string;
    for (const id of done) await settled(alice, id, 'completed');
    await settled(alice, waiting, 'waiting');
    await settled(bob, bobs, 'completed');

    reader = await bootRuntime({ config: READER_CONFIG, database: dir.database('parity') });
    const runtime = reader.runtime;

    for (const id of [...done, waiting]) {
      expect(await runtime.get(id)).toEqual((await alice.get(`/v1/operations/${id}`)).body);
      expect({ messages: await runtime.messages(id) }).toEqual((await alice.get(`/v1/operations/${id}/messages`)).body);
      expect({ items: await runtime.timeline(id) }).toEqual((await alice.get(`/v1/operations/${id}/timeline`)).body);
    }
    expect((await runtime.get(waiting))?.pendingTools).toHaveLength(1);
    expect((await runtime.timeline(done[0]!)).length).toBeGreaterThan(0);

    const httpFirst = (await alice.get('/v1/operations?limit=2')).body;
    const libraryFirst = await runtime.list({ ownerId: 'alice', limit: 2 });
    expect(libraryFirst).toEqual(httpFirst);
    const httpSecond = (await alice.get(`/v1/operations?limit=2&cursor=${httpFirst.nextCursor}`)).body;
    expect(await runtime.list({ ownerId: 'alice', limit: 2, cursor: httpFirst.nextCursor })).toEqual(httpSecond);
    expect([...httpFirst.items, ...httpSecond.items].map((item: { operationId: string }) => item.operationId)).toEqual([waiting, ...[...done].reverse()]);
    expect((await runtime.list({ ownerId: 'alice', limit: 200 })).items.map((item) => item.operationId)).not.toContain(bobs);
    expect(await runtime.list({ ownerId: 'bob' })).toEqual((await bob.get('/v1/operations')).body);
  }, 60_000);
});
