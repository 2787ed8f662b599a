/**
 * Issue 7 item 2 on the built server: bearer API keys mapped to owners (from AGENT_HOOKS_API_KEYS and a
 * keys file), 401 without a valid key, another owner's operation is a 404 on every route, idempotency per
 * owner, context.userId is always the caller's owner (B3), the caller env allow-list (S2), keys never
 * logged; without keys the server refuses a non-loopback address.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBuilt, startServer, type ServerProcess } from './support/server-process.js';
import { scratch, type Scratch } from './support/e2e-config.js';
import { apiClient, expectErrorShape, until, type ApiClient } from './support/http-client.js';
import { startReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const ALICE_KEY = 'alice-key-9f2c1e7a';
const BOB_KEY = 'bob-key-4d8b3a61';
const CAROL_KEY = 'carol-key-from-file-77e0';

let dir: Scratch;
let server: ServerProcess;
let receiver: WebhookReceiver;
let alice: ApiClient;
let bob: ApiClient;

beforeAll(async () => {
  ensureBuilt();
  dir = scratch('http-auth');
  const keysFile = join(dir.dir, 'api-keys.txt');
  writeFileSync(keysFile, `# owners by key\n${CAROL_KEY}:carol\n\n`);
  receiver = await startReceiver();
  server = await startServer({
    config: dir.config,
    plugins: dir.plugins,
    database: dir.database('auth'),
    env: {
      AGENT_HOOKS_API_KEYS: `${ALICE_KEY}:alice, ${BOB_KEY}:bob`,
      AGENT_HOOKS_API_KEYS_FILE: keysFile,
      AGENT_HOOKS_CALLER_ENV_ALLOWLIST: 'HOOK_TOKEN',
      HOOK_TOKEN: 'token-for-the-receiver',
      // The caller webhook receiver of the B3 test listens on loopback.
      AGENT_HOOKS_WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8',
    },
  });
  alice = apiClient(server.url, ALICE_KEY);
  bob = apiClient(server.url, BOB_KEY);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await receiver?.close();
  dir?.remove();
});

const body = { agentId: 'approver', prompt: 'What time is it?' };

describe('issue 7 item 2: bearer API keys', () => {
  it('no key, a wrong key, or another scheme → 401 unauthorized with a Bearer challenge', async () => {
    const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer not-a-key' }, { authorization: `Basic ${ALICE_KEY}` }, { authorization: `Bearer ${ALICE_KEY}x` }];
    for (const headers of attempts) {
      const reply = await apiClient(server.url).post('/v1/operations', body, headers);
      expectErrorShape(reply, 401, 'unauthorized');
      expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    expectErrorShape(await apiClient(server.url).get('/v1/operations/00000000-0000-4000-8000-000000000000'), 401, 'unauthorized');
  });

  it('keys from the keys file work too; health and docs need no key', async () => {
    expect((await apiClient(server.url, CAROL_KEY).post('/v1/operations', { agentId: 'assistant', prompt: 'hi' })).status).toBe(201);
    expect((await apiClient(server.url).get('/healthz')).status).toBe(200);
    expect((await apiClient(server.url).get('/docs-json')).status).toBe(200);
  });

  it("another owner's operation is 404 on every route, and nothing of it changes", async () => {
    const created = await alice.post('/v1/operations', body);
    const id = created.body.operationId as string;
    const waiting = await until(() => alice.get(`/v1/operations/${id}`), (r) => r.body?.status === 'waiting', 'approval wait');
    const toolCallId = waiting.body.pendingTools[0].toolCallId as string;

    for (const path of ['', '/messages', '/timeline', '/events']) expectErrorShape(await bob.get(`/v1/operations/${id}${path}`), 404, 'not_found');
    expectErrorShape(await bob.post(`/v1/operations/${id}/cancel`), 404, 'not_found');
    expectErrorShape(await bob.post(`/v1/operations/${id}/interventions/${toolCallId}`, { action: 'approve' }), 404, 'not_found');
    expectErrorShape(await bob.post(`/v1/operations/${id}/tool-results/${toolCallId}`, { content: 'x' }), 404, 'not_found');
    // Indistinguishable from an operation that does not exist.
    const missing = await bob.get('/v1/operations/00000000-0000-4000-8000-000000000000');
    expect((await bob.get(`/v1/operations/${id}`)).body).toEqual(missing.body);

    expect((await alice.get(`/v1/operations/${id}`)).body.status).toBe('waiting');
    expect((await alice.post(`/v1/operations/${id}/interventions/${toolCallId}`, { action: 'reject' })).body).toEqual({ status: 'completed' });
  });

  it('Idempotency-Key is per owner: the same key from two owners makes two operations', async () => {
    const fromAlice = await alice.post('/v1/operations', { agentId: 'assistant', prompt: 'hi' }, { 'idempotency-key': 'shared-key' });
    const fromBob = await bob.post('/v1/operations', { agentId: 'assistant', prompt: 'hi' }, { 'idempotency-key': 'shared-key' });
    const again = await alice.post('/v1/operations', { agentId: 'assistant', prompt: 'hi' }, { 'idempotency-key': 'shared-key' });
    expect(fromBob.body.operationId).not.toBe(fromAlice.body.operationId);
    expect(again.body.operationId).toBe(fromAlice.body.operationId);
  });

  it('B3: context.userId is always the caller’s owner id, whatever is sent', async () => {
    const created = await alice.post('/v1/operations', {
      agentId: 'assistant',
      prompt: 'What time is it?',
      context: { userId: 'bob', metadata: { ticket: 7 } },
      hooks: [{ id: 'notify', type: 'afterToolCall', webhook: { url: receiver.url, headers: { authorization: 'Bearer ${HOOK_TOKEN}' }, allowedEnvVars: ['HOOK_TOKEN'] } }],
    });
    expect(created.status).toBe(201);
    await until(() => alice.get(`/v1/operations/${created.body.operationId}`), (r) => r.body?.status === 'completed', 'completion');
    const delivered = await until(async () => receiver.bodies.filter((b) => b?.operationId === created.body.operationId), (list) => list.length > 0, 'webhook delivery');
    expect(delivered[0].userId).toBe('alice');
    const timeline = await alice.get(`/v1/operations/${created.body.operationId}/timeline`);
    expect(timeline.body.items).toEqual(expect.arrayContaining([expect.objectContaining({ point: 'afterToolCall', hookId: 'notify', source: 'caller' })]));
  });

  it('S2: allowedEnvVars must be on AGENT_HOOKS_CALLER_ENV_ALLOWLIST (a caller cannot have DATABASE_URL sent to itself)', async () => {
    const reply = await alice.post('/v1/operations', {
      agentId: 'assistant',
      prompt: 'hi',
      hooks: [{ id: 'leak', type: 'beforeStep', webhook: { url: receiver.url, headers: { 'x-db': '${DATABASE_URL}' }, allowedEnvVars: ['DATABASE_URL'] } }],
    });
    expectErrorShape(reply, 400, 'invalid_request');
    expect(reply.body.error.message).toContain('hooks[0].webhook.allowedEnvVars[0]');
  });

  it('S1: no key ever appears in the server output', () => {
    for (const key of [ALICE_KEY, BOB_KEY, CAROL_KEY]) expect(server.output()).not.toContain(key);
  });
});

describe('issue 7 item 2: without keys, loopback only', () => {
  it('agentctl serve --host 0.0.0.0 without keys refuses to start (exit 2) and says how to fix it', () => {
    const run = spawnSync(process.execPath, ['dist/cli/agentctl.js', 'serve', '--port', '0', '--host', '0.0.0.0', '--config', dir.config, '--database', dir.database('refused')], {
      encoding: 'utf8',
      env: { ...process.env, AGENT_HOOKS_API_KEYS: '', AGENT_HOOKS_API_KEYS_FILE: '' },
      timeout: 30_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('AGENT_HOOKS_API_KEYS');
    expect(run.stderr).toContain('--host 127.0.0.1');
  });

  it('a malformed key entry stops the start (exit 2) without echoing it', () => {
    const run = spawnSync(process.execPath, ['dist/cli/agentctl.js', 'serve', '--port', '0', '--config', dir.config, '--database', dir.database('bad-key')], {
      encoding: 'utf8',
      env: { ...process.env, AGENT_HOOKS_API_KEYS: 'secret-without-owner' },
      timeout: 30_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('AGENT_HOOKS_API_KEYS entry 1');
    expect(run.stderr).not.toContain('secret-without-owner');
  });
});
