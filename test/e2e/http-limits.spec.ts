/**
 * SPEC G6 (limits on untrusted input) and G8 (idempotency) on the built server, over HTTP only: body depth
 * on every route, `context.metadata` size, matcher length and compiled-size budgets (refused while the
 * server keeps answering), and `Idempotency-Key` with another body. Two API keys, two owners.
 */
import { ensureBuilt, startServer, type ServerProcess } from './support/server-process.js';
import { scratch, type Scratch } from './support/e2e-config.js';
import { apiClient, expectErrorShape, type ApiClient, type Reply } from './support/http-client.js';

const ALICE_KEY = 'limits-alice-key-0123456789';
const BOB_KEY = 'limits-bob-key-0123456789';

let dir: Scratch;
let server: ServerProcess;
let alice: ApiClient;
let bob: ApiClient;

beforeAll(async () => {
  ensureBuilt();
  dir = scratch('http-limits');
  server = await startServer({
    config: dir.config,
    plugins: dir.plugins,
    database: dir.database('limits'),
    env: { AGENT_HOOKS_API_KEYS: `${ALICE_KEY}:alice, ${BOB_KEY}:bob` },
  });
  alice = apiClient(server.url, ALICE_KEY);
  bob = apiClient(server.url, BOB_KEY);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  dir?.remove();
});

/** An object `levels` deep: 1 is `{}`, 2 is `{ "a": {} }`. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

/** Body depth: the body (1), `context` (2), then `metadata` with its own levels. */
const withMetadata = (metadata: unknown) => ({ agentId: 'assistant', prompt: 'hi', context: { metadata } });

function expectRefusal(reply: Reply, field: string, secret?: string): void {
  expectErrorShape(reply, 400, 'invalid_request');
  expect(reply.body.error.message).toContain(field);
  if (secret !== undefined) expect(reply.body.error.message).not.toContain(secret);
}

const MISSING_OPERATION = '00000000-0000-4000-8000-000000000000';

describe('G6 request bodies nest at most 64 levels', () => {
  it('G6: a body nested 65 deep is a 400 naming the field; 64 deep is accepted', async () => {
    const ok = await alice.post('/v1/operations', withMetadata(nested(62)));
    expect(ok.status).toBe(201);
    const refused = await alice.post('/v1/operations', withMetadata(nested(63)));
    expectRefusal(refused, 'context.metadata: is nested deeper than 64 levels');
  });

  it('G6: context.metadata nested 20,000 deep is a 400, not a 500, and the server keeps serving', async () => {
    const deep = `{"agentId":"assistant","prompt":"hi","context":{"metadata":${'{"k":'.repeat(20_000)}"deep-secret-value"${'}'.repeat(20_000)}}}`;
    expectRefusal(await alice.post('/v1/operations', deep), 'context.metadata', 'deep-secret-value');
    expect((await alice.get('/healthz')).status).toBe(200);
  });

  it('G6: the depth limit holds on every route; a bare nested array is named "body"', async () => {
    const array = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
    for (const path of [`/v1/operations/${MISSING_OPERATION}/interventions/call-1`, `/v1/operations/${MISSING_OPERATION}/tool-results/call-1`, `/v1/operations/${MISSING_OPERATION}/cancel`]) {
      expectRefusal(await alice.post(path, array), 'body: is nested deeper than 64 levels');
    }
    const reason = await alice.post(`/v1/operations/${MISSING_OPERATION}/interventions/call-1`, { action: 'approve', reason: nested(100) });
    expectRefusal(reason, 'is nested deeper than 64 levels');
    expect(reason.body.error.message).toMatch(/^reason\b/);
  });

  it('F6: edited approval args nested over the limit are a 400 naming args, never their values', async () => {
    const deep = `{"action":"approve","args":${'{"k":'.repeat(100)}"edited-secret-value"${'}'.repeat(100)}}`;
    const refused = await alice.post(`/v1/operations/${MISSING_OPERATION}/interventions/call-1`, deep);
    expectRefusal(refused, 'args', 'edited-secret-value');
    expect(refused.body.error.message).toContain('is nested deeper than 64 levels');
  });

  it('G6: context.metadata over 16 KB serialized is a 400 naming context.metadata, without the value', async () => {
    expect((await alice.post('/v1/operations', withMetadata({ note: 'x'.repeat(16_000) }))).status).toBe(201);
    const refused = await alice.post('/v1/operations', withMetadata({ note: `secret-${'x'.repeat(16_400)}` }));
    expectRefusal(refused, 'context.metadata: must be at most 16384 bytes', 'secret-');
  });
});

describe('G6 matchers: length and compiled-size budgets', () => {
  const hook = (id: string, matcher: string) => ({ id, type: 'afterToolCall', matcher, webhook: { url: 'https://example.com/h' } });

  it('G6: a matcher over 1,024 characters is a 400 naming hooks[0].matcher, never echoing it', async () => {
    const matcher = `^secret-pattern/${'x'.repeat(1_020)}$`;
    const reply = await alice.post('/v1/operations', { agentId: 'assistant', prompt: 'hi', hooks: [hook('long', matcher)] });
    expectRefusal(reply, 'hooks[0].matcher: must be at most 1024 characters', 'secret-pattern');
  });

  it('G6: a short matcher that would compile to a huge program is refused before compiling', async () => {
    // 1,022 characters, about 146,000 instructions once `{1000}` is expanded.
    const matcher = 'a{1000}'.repeat(146);
    const reply = await alice.post('/v1/operations', { agentId: 'assistant', prompt: 'hi', hooks: [hook('huge', matcher)] });
    expectRefusal(reply, 'hooks[0].matcher: compiles to too large a program');
  });

  it('G6: oversized registrations are refused while /healthz keeps answering', async () => {
    // Each matcher fits its own budget (~4,000 instructions); five together exceed the registration's.
    // None matches `clock/now`, so the one accepted below sends no webhook.
    const matcher = 'a{1000}'.repeat(4);
    const body = { agentId: 'assistant', prompt: 'hi', hooks: ['h0', 'h1', 'h2', 'h3', 'h4'].map((id) => hook(id, matcher)) };
    const registrations = Array.from({ length: 20 }, () => alice.post('/v1/operations', body));
    const health = Array.from({ length: 5 }, () => alice.get('/healthz'));
    const [refused, answered] = await Promise.all([Promise.all(registrations), Promise.all(health)]);
    for (const reply of refused) expectRefusal(reply, 'hooks[4].matcher: the patterns of this registration together compile to too large a program');
    expect(answered.map((reply) => reply.status)).toEqual([200, 200, 200, 200, 200]);
    // Four of them are one registration within its budget.
    expect((await alice.post('/v1/operations', { ...body, hooks: body.hooks.slice(0, 4) })).status).toBe(201);
  });
});

describe('G8 Idempotency-Key', () => {
  it('G8: the same key and body return the same operation; another body is 422 idempotency_key_reused; keys are per owner', async () => {
    const key = { 'idempotency-key': 'g8-order-1' };
    const first = await alice.post('/v1/operations', { agentId: 'assistant', prompt: 'What time is it?', context: { metadata: { a: 1, b: 2 } } }, key);
    expect(first.status).toBe(201);
    // Same body, keys in another order: the same request.
    const retry = await alice.post('/v1/operations', { context: { metadata: { b: 2, a: 1 } }, prompt: 'What time is it?', agentId: 'assistant' }, key);
    expect(retry.status).toBe(201);
    expect(retry.body.operationId).toBe(first.body.operationId);

    const reused = await alice.post('/v1/operations', { agentId: 'assistant', prompt: 'another-secret-prompt' }, key);
    expectErrorShape(reused, 422, 'idempotency_key_reused');
    expect(reused.body.error.message).not.toContain('another-secret-prompt');
    expect(reused.body.error.message).not.toContain('g8-order-1');

    // Another owner's key space: the same key with another body is a new operation of its own.
    const other = await bob.post('/v1/operations', { agentId: 'assistant', prompt: 'another-secret-prompt' }, key);
    expect(other.status).toBe(201);
    expect(other.body.operationId).not.toBe(first.body.operationId);
    const bobRetry = await bob.post('/v1/operations', { agentId: 'assistant', prompt: 'another-secret-prompt' }, key);
    expect(bobRetry.body.operationId).toBe(other.body.operationId);
  });
});
