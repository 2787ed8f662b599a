/**
 * DESIGN §7 through the built server, over HTTP only (no API keys: loopback, owner "local"): the README's
 * curl session, exact response shapes, every validation error (400 naming the field), 413, malformed
 * JSON, unknown agent and operation, Idempotency-Key, and the OpenAPI document at /docs.
 */
import { ensureBuilt, startServer, type ServerProcess } from './support/server-process.js';
import { scratch, type Scratch } from './support/e2e-config.js';
import { apiClient, expectErrorShape, until, type ApiClient } from './support/http-client.js';

let dir: Scratch;
let server: ServerProcess;
let api: ApiClient;

beforeAll(async () => {
  ensureBuilt();
  dir = scratch('http-api');
  server = await startServer({ config: dir.config, plugins: dir.plugins, database: dir.database('api') });
  api = apiClient(server.url);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  dir?.remove();
});

const completed = (id: string) => until(() => api.get(`/v1/operations/${id}`), (r) => r.body?.status === 'completed', `operation ${id}`);

describe('DESIGN §7 the curl session: start → operation → messages → timeline', () => {
  it('POST /v1/operations answers 201 { operationId, status } and the operation runs to done', async () => {
    const created = await api.post('/v1/operations', { agentId: 'assistant', prompt: 'What time is it?' });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(['operationId', 'status']);
    expect(created.body.operationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(['running', 'waiting', 'completed']).toContain(created.body.status);

    const operation = await completed(created.body.operationId);
    expect(operation.body).toEqual({
      operationId: created.body.operationId,
      agentId: 'assistant',
      status: 'completed',
      reason: 'done',
      usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number), costUsd: 0 },
    });

    const { status, body } = await api.get(`/v1/operations/${created.body.operationId}/messages`);
    expect(status).toBe(200);
    expect(Object.keys(body)).toEqual(['messages']);
    expect(body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    const allowed = ['id', 'role', 'content', 'toolCallId', 'identifier', 'apiName', 'error', 'state'];
    for (const message of body.messages) {
      // Exactly as published: no seq, operationId, createdAt or toolCalls.
      expect(Object.keys(message).every((key) => allowed.includes(key))).toBe(true);
      expect(typeof message.content).toBe('string');
    }
    expect(body.messages[0].content).toBe('What time is it?');
    expect(body.messages[2]).toMatchObject({ role: 'tool', identifier: 'clock', apiName: 'now', toolCallId: expect.any(String) });
    expect(body.messages[3].content).toBe(`It is ${body.messages[2].content}.`);

    const timeline = await api.get(`/v1/operations/${created.body.operationId}/timeline`);
    expect(timeline.status).toBe(200);
    expect(Object.keys(timeline.body)).toEqual(['items']);
    expect(timeline.body.items).toEqual([
      // F1: a tool point's row names its call's idempotency key (an opaque hash, never the arguments).
      { seq: expect.any(Number), at: expect.any(String), point: 'after_tool_call', hookId: 'quickstart_hooks.auditToolCall', source: 'config', outcome: 'ok', latencyMs: expect.any(Number), idempotencyKey: expect.stringMatching(/^nah_[\w-]{43}$/) },
    ]);
    expect(new Date(timeline.body.items[0].at).toISOString()).toBe(timeline.body.items[0].at);
  });

  it('unknown agent → 404 unknown_agent; unknown operation, malformed id and unknown path → 404, all as { error: { code, message } }', async () => {
    expectErrorShape(await api.post('/v1/operations', { agentId: 'nobody', prompt: 'hi' }), 404, 'unknown_agent');
    for (const path of ['/v1/operations/00000000-0000-4000-8000-000000000000', '/v1/operations/not-a-uuid', '/v1/operations/00000000-0000-4000-8000-000000000000/timeline', '/no/such/path']) {
      expectErrorShape(await api.get(path), 404, 'not_found');
    }
    expectErrorShape(await api.post('/v1/operations/00000000-0000-4000-8000-000000000000/cancel'), 404, 'not_found');
  });
});

describe('DESIGN §7 bad input is 400 with the field named', () => {
  const hook = (webhook: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ id: 'h1', type: 'afterToolCall', webhook, ...extra });
  const cases: [string, unknown, string][] = [
    ['missing agentId', { prompt: 'hi' }, 'agentId: Required'],
    ['missing prompt', { agentId: 'assistant' }, 'prompt: Required'],
    ['agentId not a string', { agentId: 7, prompt: 'hi' }, 'agentId'],
    ['prompt not a string', { agentId: 'assistant', prompt: ['hi'] }, 'prompt'],
    ['unknown field', { agentId: 'assistant', prompt: 'hi', promt: 'typo' }, 'promt'],
    ['hooks not an array', { agentId: 'assistant', prompt: 'hi', hooks: {} }, 'hooks'],
    ['a hook without webhook (webhook-only over HTTP)', { agentId: 'assistant', prompt: 'hi', hooks: [{ id: 'h1', type: 'afterToolCall' }] }, 'hooks[0].webhook: Required'],
    ['a hook with a handler', { agentId: 'assistant', prompt: 'hi', hooks: [hook({ url: 'https://example.com/h' }, { handler: 'x => x' })] }, 'hooks[0].handler'],
    ['a hook of an unknown type', { agentId: 'assistant', prompt: 'hi', hooks: [{ id: 'h1', type: 'on_run_start', webhook: { url: 'https://example.com/h' } }] }, 'hooks[0].type'],
    ['W4 a webhook URL that is not http(s)', { agentId: 'assistant', prompt: 'hi', hooks: [hook({ url: 'file:///etc/passwd' })] }, 'webhook.url'],
    ['W4 an unknown webhook key', { agentId: 'assistant', prompt: 'hi', hooks: [hook({ url: 'https://example.com/h', retries: 3 })] }, 'webhook'],
    ['W10 a removed response mode', { agentId: 'assistant', prompt: 'hi', hooks: [hook({ url: 'https://example.com/h', responseHandling: 'toolResult' })] }, 'webhook.responseHandling'],
    ['S2 allowedEnvVars outside the operator allow-list', { agentId: 'assistant', prompt: 'hi', hooks: [hook({ url: 'https://example.com/h', allowedEnvVars: ['DATABASE_URL'] })] }, 'hooks[0].webhook.allowedEnvVars[0]'],
    ['B3 a webhook body naming a user', { agentId: 'assistant', prompt: 'hi', hooks: [hook({ url: 'https://example.com/h', body: { userId: 'someone-else' } })] }, 'hooks[0].webhook.body.userId'],
    ['context.organizationId not a string', { agentId: 'assistant', prompt: 'hi', context: { organizationId: 5 } }, 'context.organizationId'],
    ['context.authContext (identity comes from the key)', { agentId: 'assistant', prompt: 'hi', context: { authContext: { scopes: ['admin'] } } }, 'context.authContext'],
    ['a body that is an array', [], 'body'],
  ];

  it.each(cases)('POST /v1/operations: %s', async (_name, body, field) => {
    const reply = await api.post('/v1/operations', body);
    expectErrorShape(reply, 400, 'invalid_request');
    expect(reply.body.error.message).toContain(field);
  });

  it('malformed JSON → 400 invalid_json; a missing body → 400 naming the body', async () => {
    expectErrorShape(await api.post('/v1/operations', '{"agentId": "assistant",'), 400, 'invalid_json');
    const missing = await api.post('/v1/operations');
    expectErrorShape(missing, 400, 'invalid_request');
    expect(missing.body.error.message).toContain('body: Required');
  });

  it('Idempotency-Key longer than 255 characters → 400 naming the header', async () => {
    const reply = await api.post('/v1/operations', { agentId: 'assistant', prompt: 'hi' }, { 'idempotency-key': 'k'.repeat(256) });
    expectErrorShape(reply, 400, 'invalid_request');
    expect(reply.body.error.message).toContain('Idempotency-Key');
  });

  it('a body over 1 MB → 413 payload_too_large, and the server keeps serving', async () => {
    const reply = await api.post('/v1/operations', { agentId: 'assistant', prompt: 'x'.repeat(1_100_000) });
    expectErrorShape(reply, 413, 'payload_too_large');
    expect((await api.get('/healthz')).status).toBe(200);
  });

  it('interventions and tool-results bodies: action, reason, content and success are checked', async () => {
    const created = await api.post('/v1/operations', { agentId: 'approver', prompt: 'What time is it?' });
    const id = created.body.operationId as string;
    const waiting = await until(() => api.get(`/v1/operations/${id}`), (r) => r.body?.status === 'waiting', 'approval wait');
    const toolCallId = waiting.body.pendingTools[0].toolCallId as string;
    const checks: [string, unknown, string][] = [
      [`interventions/${toolCallId}`, {}, 'action: Required'],
      [`interventions/${toolCallId}`, { action: 'maybe' }, 'action'],
      [`interventions/${toolCallId}`, { action: 'reject', reason: 5 }, 'reason'],
      [`interventions/${toolCallId}`, { action: 'approve', continue: true }, 'continue'],
      [`tool-results/${toolCallId}`, {}, 'content: Required'],
      [`tool-results/${toolCallId}`, { content: 5 }, 'content'],
      [`tool-results/${toolCallId}`, { content: 'x', success: 'yes' }, 'success'],
    ];
    for (const [path, body, field] of checks) {
      const reply = await api.post(`/v1/operations/${id}/${path}`, body);
      expectErrorShape(reply, 400, 'invalid_request');
      expect(reply.body.error.message).toContain(field);
    }
    // Nothing was decided by the bad requests.
    expect((await api.get(`/v1/operations/${id}`)).body.status).toBe('waiting');
    expect((await api.post(`/v1/operations/${id}/cancel`)).status).toBe(202);
  });
});

describe('DESIGN §7 Idempotency-Key', () => {
  it('a retry with the same key returns the same operation; another key starts another', async () => {
    const body = { agentId: 'assistant', prompt: 'What time is it?' };
    const first = await api.post('/v1/operations', body, { 'idempotency-key': 'order-42' });
    const retry = await api.post('/v1/operations', body, { 'idempotency-key': 'order-42' });
    const other = await api.post('/v1/operations', body, { 'idempotency-key': 'order-43' });
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.body.operationId).toBe(first.body.operationId);
    expect(other.body.operationId).not.toBe(first.body.operationId);
    await completed(first.body.operationId);
    // Only one conversation: the retry started nothing.
    const messages = await api.get(`/v1/operations/${first.body.operationId}/messages`);
    expect(messages.body.messages.filter((m: { role: string }) => m.role === 'user')).toHaveLength(1);
  });
});

describe('DESIGN §7 /docs (OpenAPI)', () => {
  it('is an OpenAPI 3 document listing every route with its method; a browser gets the Swagger UI', async () => {
    const docs = await api.get('/docs');
    expect(docs.status).toBe(200);
    expect(docs.body.openapi).toMatch(/^3\./);
    const routes = Object.entries(docs.body.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
    expect(routes).toEqual(
      expect.arrayContaining([
        'POST /v1/operations',
        'GET /v1/operations/{id}',
        'GET /v1/operations/{id}/messages',
        'GET /v1/operations/{id}/timeline',
        'GET /v1/operations/{id}/events',
        'GET /v1/events',
        'POST /v1/operations/{id}/cancel',
        'POST /v1/operations/{id}/interventions/{toolCallId}',
        'POST /v1/operations/{id}/tool-results/{toolCallId}',
        'GET /healthz',
        'GET /readyz',
      ]),
    );
    expect(docs.body.paths['/v1/operations'].post.requestBody.content['application/json'].schema.required).toEqual(['agentId', 'prompt']);
    expect((await api.get('/docs-json')).body).toEqual(docs.body);
    const ui = await fetch(`${server.url}/docs`, { headers: { accept: 'text/html' } });
    expect(ui.status).toBe(200);
    expect(await ui.text()).toContain('swagger-ui');
  });
});
