/**
 * SPEC G5 over HTTP, on the built server: once an operation is completed, a deferred result, an approval
 * or a rejection is 409 `operation_completed` and publishes nothing — also a result whose slow after-policy
 * was still deciding when the cancel came. Concurrent duplicates of one result: one after-policy call, one
 * 200, the rest 409 `already_completed`. The policy is a loopback receiver that answers when the test says.
 */
import { ensureBuilt, startServer, type ServerProcess } from './support/server-process.js';
import { scratch, type Scratch } from './support/e2e-config.js';
import { apiClient, expectErrorShape, until, type ApiClient } from './support/http-client.js';
import { startHeldReceiver, type HeldReceiver } from '../integration/human-loop/held-receiver.js';

let dir: Scratch;
let server: ServerProcess;
let api: ApiClient;
let receiver: HeldReceiver;

beforeAll(async () => {
  ensureBuilt();
  dir = scratch('http-g5');
  server = await startServer({
    config: dir.config,
    plugins: dir.plugins,
    database: dir.database('g5'),
    // The slow policy listens on loopback.
    env: { AGENT_HOOKS_WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8' },
  });
  api = apiClient(server.url);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  dir?.remove();
});

beforeEach(async () => {
  receiver = await startHeldReceiver();
});
afterEach(async () => {
  receiver.release({ decision: 'allow' });
  await receiver.close();
});

const operation = (id: string) => api.get(`/v1/operations/${id}`);
const completed = (id: string) => until(() => operation(id), (r) => r.body?.status === 'completed', `operation ${id} to complete`);
const toolMessages = async (id: string) => (await api.get(`/v1/operations/${id}/messages`)).body.messages.filter((m: { role: string }) => m.role === 'tool');
const slowPolicy = () => ({ id: 'slow-policy', type: 'afterToolCall', webhook: { url: receiver.url, responseHandling: 'toolCall', onError: 'block' } });

async function startWaiting(agentId: string, hooks: unknown[] = []): Promise<{ id: string; toolCallId: string }> {
  const created = await api.post('/v1/operations', { agentId, prompt: 'What time is it?', hooks });
  expect(created.status).toBe(201);
  const id = created.body.operationId as string;
  const waiting = await until(() => operation(id), (r) => r.body?.status === 'waiting', `operation ${id} to wait`);
  return { id, toolCallId: waiting.body.pendingTools[0].toolCallId };
}

describe('SPEC G5 nothing after the end, over HTTP', () => {
  it('G5: a deferred result racing a cancel is 409 operation_completed and publishes nothing', async () => {
    const { id, toolCallId } = await startWaiting('deferring', [slowPolicy()]);
    const arriving = api.post(`/v1/operations/${id}/tool-results/${toolCallId}`, { content: 'noon', success: true });
    await receiver.untilHits(1);
    expect((await api.post(`/v1/operations/${id}/cancel`)).status).toBe(202);
    expect((await completed(id)).body.reason).toBe('interrupted');
    receiver.release({ decision: 'allow' });
    expectErrorShape(await arriving, 409, 'operation_completed');
    expect(await toolMessages(id)).toEqual([]);
    expectErrorShape(await api.post(`/v1/operations/${id}/tool-results/${toolCallId}`, { content: 'later' }), 409, 'operation_completed');
    expect(receiver.hits()).toBe(1);
  }, 60_000);

  it('G5: approving or rejecting a completed operation is 409 operation_completed', async () => {
    const { id, toolCallId } = await startWaiting('approver');
    expect((await api.post(`/v1/operations/${id}/cancel`)).status).toBe(202);
    await completed(id);
    for (const action of ['approve', 'reject', 'rejectAndContinue']) {
      expectErrorShape(await api.post(`/v1/operations/${id}/interventions/${toolCallId}`, { action, reason: 'late' }), 409, 'operation_completed');
    }
    expect(await toolMessages(id)).toEqual([]);
  }, 60_000);

  it('G5: 50 concurrent duplicates of one deferred result run the after-policy once: one 200, 49 already_completed', async () => {
    const { id, toolCallId } = await startWaiting('deferring', [slowPolicy()]);
    let settled = 0;
    let allButOne!: () => void;
    const turnedAway = new Promise<void>((resolve) => (allButOne = resolve));
    const replies = Array.from({ length: 50 }, (_, i) => {
      const reply = api.post(`/v1/operations/${id}/tool-results/${toolCallId}`, { content: `noon ${i}`, success: true });
      void reply.finally(() => ++settled === 49 && allButOne()).catch(() => undefined);
      return reply;
    });
    await receiver.untilHits(1);
    await Promise.race([turnedAway, receiver.untilHits(2)]);
    receiver.release({ decision: 'allow' });
    const all = await Promise.all(replies);
    expect(receiver.hits()).toBe(1);
    expect(all.filter((r) => r.status === 200).map((r) => r.body)).toEqual([{ published: true }]);
    const refused = all.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(49);
    for (const reply of refused) expectErrorShape(reply, 409, 'already_completed');
    expect((await completed(id)).body.reason).toBe('done');
    expect(await toolMessages(id)).toHaveLength(1);
    expect(server.output()).not.toContain('MaxListenersExceededWarning');
  }, 60_000);
});
