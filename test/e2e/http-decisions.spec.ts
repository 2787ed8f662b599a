/**
 * Deciding and completing over HTTP (DESIGN §7, SPEC A3, L4): approve, reject, reject-and-continue,
 * deferred completion (first 200, duplicate 409), cancel (202), and the live event stream (SSE) — on the
 * built server, over HTTP only.
 */
import { ensureBuilt, startServer, type ServerProcess } from './support/server-process.js';
import { scratch, type Scratch } from './support/e2e-config.js';
import { apiClient, expectErrorShape, until, type ApiClient, type Reply } from './support/http-client.js';
import { readEvents, watchEvents, type SseEvent } from './support/sse.js';

let dir: Scratch;
let server: ServerProcess;
let api: ApiClient;

beforeAll(async () => {
  ensureBuilt();
  dir = scratch('http-decisions');
  server = await startServer({ config: dir.config, plugins: dir.plugins, database: dir.database('decisions') });
  api = apiClient(server.url);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  dir?.remove();
});

const operation = (id: string) => api.get(`/v1/operations/${id}`);
const completed = (id: string) => until(() => operation(id), (r) => r.body?.status === 'completed', `operation ${id} to complete`);

/** Starts an operation of `agentId` and waits until it waits, with its one pending tool. */
async function startWaiting(agentId: string): Promise<{ id: string; toolCallId: string; waiting: Reply }> {
  const created = await api.post('/v1/operations', { agentId, prompt: 'What time is it?' });
  expect(created.status).toBe(201);
  const id = created.body.operationId as string;
  const waiting = await until(() => operation(id), (r) => r.body?.status === 'waiting', `operation ${id} to wait`);
  return { id, toolCallId: waiting.body.pendingTools[0].toolCallId, waiting };
}

const isWaitingStatus = (event: SseEvent) => event.event === 'status' && event.data.status === 'waiting';

const toolMessage = async (id: string) => (await api.get(`/v1/operations/${id}/messages`)).body.messages.find((m: { role: string }) => m.role === 'tool');

describe('DESIGN §7 / SPEC A3 approvals through the API', () => {
  it('a waiting operation shows pendingTools [{ toolCallId, identifier, apiName, args, kind: approval }]', async () => {
    const { id, toolCallId, waiting } = await startWaiting('approver');
    expect(waiting.body).toEqual({
      operationId: id,
      agentId: 'approver',
      status: 'waiting',
      pendingTools: [{ toolCallId, identifier: 'clock', apiName: 'now', args: {}, kind: 'approval', idempotencyKey: expect.stringMatching(/^nah_/) }],
      usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number), costUsd: 0 },
    });
    await api.post(`/v1/operations/${id}/cancel`);
  });

  it('approve → 200 { status }; the tool runs and the operation completes; a second decision → 409 not_pending', async () => {
    const { id, toolCallId } = await startWaiting('approver');
    const approved = await api.post(`/v1/operations/${id}/interventions/${toolCallId}`, { action: 'approve' });
    expect(approved.status).toBe(200);
    expect(Object.keys(approved.body)).toEqual(['status']);
    expect(['running', 'completed']).toContain(approved.body.status);
    expect((await completed(id)).body.reason).toBe('done');
    expect((await toolMessage(id)).content).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expectErrorShape(await api.post(`/v1/operations/${id}/interventions/${toolCallId}`, { action: 'approve' }), 409, 'not_pending');
    expectErrorShape(await api.post(`/v1/operations/${id}/interventions/no-such-call`, { action: 'approve' }), 404, 'not_found');
  });

  it('rejectAndContinue → the reason becomes the tool result and the run goes on to done', async () => {
    const { id, toolCallId } = await startWaiting('approver');
    const rejected = await api.post(`/v1/operations/${id}/interventions/${toolCallId}`, { action: 'rejectAndContinue', reason: 'Not now.' });
    expect(rejected.status).toBe(200);
    expect(['running', 'completed']).toContain(rejected.body.status);
    expect((await completed(id)).body.reason).toBe('done');
    const tool = await toolMessage(id);
    expect(tool).toMatchObject({ role: 'tool', toolCallId, content: 'Not now.' });
    const messages = (await api.get(`/v1/operations/${id}/messages`)).body.messages;
    expect(messages.at(-1).content).toBe('It is Not now..');
  });

  it('reject → 200 { status: completed }, reason interrupted', async () => {
    const { id, toolCallId } = await startWaiting('approver');
    const rejected = await api.post(`/v1/operations/${id}/interventions/${toolCallId}`, { action: 'reject', reason: 'No.' });
    expect(rejected.status).toBe(200);
    expect(rejected.body).toEqual({ status: 'completed' });
    expect((await operation(id)).body).toMatchObject({ status: 'completed', reason: 'interrupted' });
    expect((await operation(id)).body.pendingTools).toBeUndefined();
  });
});

describe('SPEC F6 approve with edited arguments through the API', () => {
  it('F6: { action: approve, args } the schema refuses → 400 naming the path, nothing stored; args on a rejection → 400', async () => {
    const { id, toolCallId } = await startWaiting('approver');
    // clock/now takes no arguments (additionalProperties: false).
    const refused = await api.post(`/v1/operations/${id}/interventions/${toolCallId}`, { action: 'approve', args: { zone: 'a-distinctive-value' } });
    expectErrorShape(refused, 400, 'invalid_arguments');
    expect(refused.body.error.message).toContain('args: invalid arguments for clock/now');
    expect(JSON.stringify(refused.body)).not.toContain('a-distinctive-value');
    expectErrorShape(await api.post(`/v1/operations/${id}/interventions/${toolCallId}`, { action: 'approve', args: [1] }), 400);
    expectErrorShape(await api.post(`/v1/operations/${id}/interventions/${toolCallId}`, { action: 'rejectAndContinue', args: {} }), 400, 'invalid_request');
    // Nothing was stored: the call is still pending.
    expect((await operation(id)).body).toMatchObject({ status: 'waiting', pendingTools: [{ toolCallId, kind: 'approval' }] });
    await api.post(`/v1/operations/${id}/cancel`);
  });

  it('F6: { action: approve, args } the schema accepts → 200; the call runs with them and the operation completes', async () => {
    const { id, toolCallId } = await startWaiting('approver');
    const approved = await api.post(`/v1/operations/${id}/interventions/${toolCallId}`, { action: 'approve', args: {} });
    expect(approved.status).toBe(200);
    expect((await completed(id)).body.reason).toBe('done');
    expect((await toolMessage(id)).content).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });
});

describe('DESIGN §7 / SPEC L4 deferred completion through the API', () => {
  it('first result → 200 { published: true } and the run goes on; a duplicate → 409 already_completed', async () => {
    const { id, toolCallId, waiting } = await startWaiting('deferring');
    expect(waiting.body.pendingTools).toEqual([{ toolCallId, identifier: 'clock', apiName: 'now', args: {}, kind: 'deferred', idempotencyKey: expect.stringMatching(/^nah_/) }]);
    const first = await api.post(`/v1/operations/${id}/tool-results/${toolCallId}`, { content: 'noon', success: true });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ published: true });
    const duplicate = await api.post(`/v1/operations/${id}/tool-results/${toolCallId}`, { content: 'midnight' });
    expectErrorShape(duplicate, 409, 'already_completed');
    expect((await completed(id)).body.reason).toBe('done');
    // The first final result stands (L4).
    expect((await toolMessage(id)).content).toBe('noon');
    expectErrorShape(await api.post(`/v1/operations/${id}/tool-results/no-such-call`, { content: 'x' }), 404, 'not_found');
  });
});

describe('DESIGN §7 cancel', () => {
  it('POST …/cancel → 202; the operation ends with reason interrupted', async () => {
    const { id } = await startWaiting('approver');
    const cancelled = await api.post(`/v1/operations/${id}/cancel`);
    expect(cancelled.status).toBe(202);
    expect((await completed(id)).body.reason).toBe('interrupted');
    // Cancelling what is over changes nothing.
    expect((await api.post(`/v1/operations/${id}/cancel`)).status).toBe(202);
    expect((await operation(id)).body.reason).toBe('interrupted');
  });
});

describe('DESIGN §7 GET …/events (Server-Sent Events)', () => {
  it('streams published messages and status changes as they happen, and ends at the terminal state', async () => {
    const { id, toolCallId } = await startWaiting('approver');
    const response = await fetch(`${server.url}/v1/operations/${id}/events`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    // The decision arrives once the stream has sent the waiting status: what follows must come live.
    const { seen, reading } = watchEvents(response, isWaitingStatus);
    await seen;
    expect((await api.post(`/v1/operations/${id}/interventions/${toolCallId}`, { action: 'approve' })).status).toBe(200);
    const { events, ended } = await reading;
    expect(ended).toBe(true);

    const messages = events.filter((e) => e.event === 'message');
    expect(messages.map((e) => e.data.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    // The same shape as GET …/messages, with the message seq as the event id.
    expect(messages.map((e) => e.data)).toEqual((await api.get(`/v1/operations/${id}/messages`)).body.messages);
    expect(messages.every((e) => /^\d+$/.test(e.id ?? ''))).toBe(true);

    const statuses = events.filter((e) => e.event === 'status').map((e) => e.data);
    expect(statuses[0]).toMatchObject({ operationId: id, status: 'waiting', pendingTools: [{ toolCallId, kind: 'approval' }] });
    expect(statuses.at(-1)).toMatchObject({ operationId: id, status: 'completed', reason: 'done' });
    expect(events.at(-1)!.event).toBe('status');
  });

  it('Last-Event-ID resumes after that message; a finished operation streams its history and ends', async () => {
    const created = await api.post('/v1/operations', { agentId: 'assistant', prompt: 'What time is it?' });
    const id = created.body.operationId as string;
    await completed(id);
    const all = await readEvents(await fetch(`${server.url}/v1/operations/${id}/events`));
    expect(all.ended).toBe(true);
    const firstTwo = all.events.filter((e) => e.event === 'message').slice(0, 2);
    const resumed = await readEvents(await fetch(`${server.url}/v1/operations/${id}/events`, { headers: { 'last-event-id': firstTwo[1]!.id! } }));
    expect(resumed.events.filter((e) => e.event === 'message').map((e) => e.data.role)).toEqual(['tool', 'assistant']);
  });

  it('unknown operation → 404 JSON, not a stream', async () => {
    expectErrorShape(await api.get('/v1/operations/00000000-0000-4000-8000-000000000000/events'), 404, 'not_found');
  });
});

describe('shutdown with an open event stream', () => {
  it('SIGTERM ends the open stream and the server exits 0 (a stream never holds the shutdown)', async () => {
    const { id } = await startWaiting('approver');
    // The stream is open and sending (it sent the waiting status) when the signal comes.
    const { seen, reading } = watchEvents(await fetch(`${server.url}/v1/operations/${id}/events`), isWaitingStatus);
    await seen;
    const started = Date.now();
    expect(await server.stop()).toBe(0);
    expect(Date.now() - started).toBeLessThan(8_000);
    const { events } = await reading;
    expect(events.at(-1)).toMatchObject({ event: 'status', data: { status: 'waiting' } });
  });
});
