/**
 * SPEC G9 and DESIGN §12 on examples/host-app, installed as a user installs it: the packed tarball in a
 * copy of the example (npm cache), built with its own tsc, migrated by its own pipeline into a fresh
 * PostgreSQL schema (`database: 'host'`), and run as a child process. Its own guard (bearer tokens, a
 * cookie session for the browser) sits in front of the mounted API and console under /agents. One install
 * and one process serve the HTTP tests and the browser test.
 */
import { jest } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { postgresSuite } from '../integration/persistence/test-databases.js';
import { browserSuite, launchBrowser } from './console/browser.js';
import { startHostApp, type HostApp } from './support/host-app-process.js';
import { apiClient, expectErrorShape, until, type ApiClient } from './support/http-client.js';
import { readEvents, type SseEvent } from './support/sse.js';

// The install and the example's tsc build take most of a minute here; the tests themselves seconds.
jest.setTimeout(90_000);

const describeOnPostgres = await postgresSuite('test/e2e/host-app.spec.ts', "examples/host-app's e2e and browser tests");
const describeInBrowser = browserSuite('test/e2e/host-app.spec.ts');
const ARTIFACTS = join('test-artifacts', 'host-app');

let app: HostApp;
const host = (token?: string) => apiClient(app.url, token);
const agents = (token?: string) => apiClient(`${app.url}/agents`, token);

/** A refund request through the host's own route, waiting for its approval; its operation and tool call. */
async function waitingRefund(as: ApiClient, order: string): Promise<{ id: string; toolCallId: string }> {
  const started = await as.post('/support/refunds', { order });
  expect(started.status).toBe(201);
  const id = started.body.operationId as string;
  const waiting = await until(() => as.get(`/agents/v1/operations/${id}`), (reply) => reply.body?.status === 'waiting', `operation of ${order} to wait`);
  return { id, toolCallId: waiting.body.pendingTools[0].toolCallId as string };
}

/**
 * Opens an event stream as `token`, runs `act`, and reads on until what it carried satisfies `enough` (or
 * the stream ends, or 30 s pass: the caller's expectations then say what is missing). A stream that goes
 * on (`/v1/events`, a waiting operation's) is then closed; an operation's stream after its `completed`
 * status is read to its own end. What it carried, and whether the server ended it.
 */
async function streamUntil(
  path: string,
  token: string,
  enough: (events: SseEvent[]) => boolean,
  act: () => Promise<unknown> = async () => undefined,
  endsByItself = false,
): Promise<{ events: SseEvent[]; ended: boolean }> {
  const abort = new AbortController();
  const response = await fetch(`${app.url}/agents${path}`, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal });
  expect(response.status).toBe(200);
  const events: SseEvent[] = [];
  let acted = false;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const check = () => {
    if (acted && enough(events)) finish();
  };
  const reading = readEvents(response, 30_000, (event) => {
    events.push(event);
    check();
  });
  void reading.then(finish);
  await act();
  acted = true;
  check();
  await finished;
  if (!endsByItself) abort.abort();
  return { events, ended: (await reading).ended };
}

const statusIs = (status: string) => (events: SseEvent[]) => events.some((event) => event.event === 'status' && event.data.status === status);

describeOnPostgres('G9 examples/host-app: the package mounted in a Nest service with its own login and database', () => {
  beforeAll(async () => {
    app = await startHostApp();
  }, 300_000);

  afterAll(async () => {
    await app?.dispose();
  }, 60_000);

  it('G9: two users see only their own operations through every mounted route, event streams included', async () => {
    const alice = host('alice-token');
    const bob = host('bob-token');
    const a = await waitingRefund(alice, 'A-1001');
    const b = await waitingRefund(bob, 'B-2002');
    // Started through the mounted API as well: the owner is the signed-in user there too.
    const viaApi = await agents('alice-token').post('/v1/operations', { agentId: 'support', prompt: 'A-1002' });
    expect(viaApi.status).toBe(201);

    const listed = async (as: ApiClient) => ((await as.get('/agents/v1/operations')).body.items as { operationId: string }[]).map((item) => item.operationId).sort();
    expect(await listed(alice)).toEqual([a.id, viaApi.body.operationId].sort());
    expect(await listed(bob)).toEqual([b.id]);

    for (const [owner, theirs] of [[alice, b], [bob, a]] as const) {
      for (const path of ['', '/messages', '/timeline', '/events']) expectErrorShape(await owner.get(`/agents/v1/operations/${theirs.id}${path}`), 404, 'not_found');
      expectErrorShape(await owner.post(`/agents/v1/operations/${theirs.id}/cancel`), 404, 'not_found');
      expectErrorShape(await owner.post(`/agents/v1/operations/${theirs.id}/interventions/${theirs.toolCallId}`, { action: 'approve' }), 404, 'not_found');
      expectErrorShape(await owner.post(`/agents/v1/operations/${theirs.id}/tool-results/${theirs.toolCallId}`, { content: 'x' }), 404, 'not_found');
      // The host's own routes answer from the read API for the same owner.
      expect((await owner.post(`/support/approvals/${theirs.id}/${theirs.toolCallId}/approve`)).status).toBe(404);
    }
    const ownApprovals = async (as: ApiClient) => ((await as.get('/support/approvals')).body.items as { operationId: string }[]).map((item) => item.operationId);
    expect(await ownApprovals(bob)).toEqual([b.id]);
    expect(await ownApprovals(alice)).not.toContain(b.id);

    // Nothing the other user sent reached them.
    for (const [owner, own] of [[alice, a], [bob, b]] as const) expect((await owner.get(`/agents/v1/operations/${own.id}`)).body.status).toBe('waiting');
    // Her own: every route answers.
    expect((await alice.get(`/agents/v1/operations/${a.id}/messages`)).body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    expect((await alice.get(`/agents/v1/operations/${a.id}/timeline`)).status).toBe(200);
    const { events: replay } = await streamUntil(`/v1/operations/${a.id}/events`, 'alice-token', statusIs('waiting'));
    expect(statusIs('waiting')(replay)).toBe(true);
    expect(replay.some((event) => event.event === 'message')).toBe(true);

    // The caller-wide stream: bob's carries his new operation's changes, none of alice's started before it.
    let alicesNext = '';
    let bobsNext = '';
    const { events: seenByBob } = await streamUntil(
      '/v1/events',
      'bob-token',
      (events) => events.some((event) => event.data.operationId === bobsNext && event.data.status === 'waiting'),
      async () => {
        alicesNext = (await waitingRefund(alice, 'A-1003')).id;
        bobsNext = (await waitingRefund(bob, 'B-2003')).id;
      },
    );
    const carried = seenByBob.map((event) => JSON.stringify(event.data));
    expect(seenByBob.some((event) => event.data.operationId === bobsNext && event.data.status === 'waiting')).toBe(true);
    expect(carried.some((data) => data.includes(alicesNext) || data.includes(a.id))).toBe(false);
  });

  it("G9: a signed-in user the owner resolver gives no owner is a 401 on every mounted route; no sign-in is the host guard's 401", async () => {
    const viewer = agents('viewer-token');
    for (const path of ['/v1/operations', '/v1/operations/op_x', '/v1/operations/op_x/messages', '/v1/operations/op_x/timeline', '/v1/operations/op_x/events', '/v1/events']) {
      expectErrorShape(await viewer.get(path), 401, 'unauthorized');
    }
    expectErrorShape(await viewer.post('/v1/operations', { agentId: 'support', prompt: 'A-1' }), 401, 'unauthorized');
    // Signed in to the host, not an agent user: the host's own routes refuse too (its shape).
    expect((await host('viewer-token').get('/support/approvals')).status).toBe(403);
    const anonymous = await agents().get('/v1/operations');
    expect(anonymous.status).toBe(401);
    // The host's guard refused it: its words, in the mounted routes' error shape.
    expectErrorShape(anonymous, 401);
    expect(anonymous.body.error.message).toContain('sign in first');
    expect((await agents('not-a-token').get('/v1/operations')).status).toBe(401);
  });

  it("G9: an approval through the host's controller resumes the run: the tool writes the host's table, the stream ends completed", async () => {
    const alice = host('alice-token');
    const { id, toolCallId } = await waitingRefund(alice, 'A-5005');
    const pending = (await alice.get('/support/approvals')).body.items as { operationId: string; toolCallId: string; tool: string; args: unknown }[];
    expect(pending).toContainEqual({ operationId: id, toolCallId, tool: 'payments/refund', args: { order: 'A-5005' } });

    const { events, ended } = await streamUntil(
      `/v1/operations/${id}/events`,
      'alice-token',
      statusIs('completed'),
      async () => expect((await alice.post(`/support/approvals/${id}/${toolCallId}/approve`)).status).toBe(204),
      true,
    );
    expect(statusIs('completed')(events)).toBe(true);
    expect(ended).toBe(true);
    expect(events.filter((event) => event.event === 'message').map((event) => event.data.content)).toContain('Done: order A-5005 refunded');
    expect((await alice.get(`/agents/v1/operations/${id}`)).body).toMatchObject({ status: 'completed', reason: 'done' });
    expect((await alice.get('/support/approvals')).body.items.map((item: { operationId: string }) => item.operationId)).not.toContain(id);
    // The host's own entity, in the host's own schema, beside the agent tables.
    const rows = (await app.database.query(`SELECT "order", operation_id FROM "${app.schema}".refunds WHERE operation_id = $1`, [id])) as unknown[];
    expect(rows).toEqual([{ order: 'A-5005', operation_id: id }]);

    // The host's @OnHook policy: a second refund of the order is approved by a person, then denied by it.
    const again = await waitingRefund(alice, 'A-5005');
    expect((await alice.post(`/support/approvals/${again.id}/${again.toolCallId}/approve`)).status).toBe(204);
    await until(() => alice.get(`/agents/v1/operations/${again.id}`), (reply) => reply.body.status === 'completed', 'the second refund to complete');
    const messages = (await alice.get(`/agents/v1/operations/${again.id}/messages`)).body.messages as { role: string; content: string }[];
    expect(messages.find((message) => message.role === 'tool')?.content).toBe('order A-5005 was already refunded');
    const timeline = (await alice.get(`/agents/v1/operations/${again.id}/timeline`)).body.items as { hookId: string; outcome: string }[];
    expect(timeline).toContainEqual(expect.objectContaining({ hookId: 'RefundPolicy.oneRefundPerOrder', outcome: 'denied' }));
  });

  describeInBrowser("DESIGN §12: the console under /agents with the host's login", () => {
    it('signs in on the host, sees only its own operation in the console, approves it, and sees it complete', async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      const mine = await waitingRefund(host('bob-token'), 'B-7007');
      const theirs = await waitingRefund(host('alice-token'), 'A-7007');
      const browser = await launchBrowser();
      try {
        const page = await browser.context.newPage();
        await page.goto(`${app.url}/login`);
        await page.getByLabel('Access token').fill('bob-token');
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(`${app.url}/agents/console/`);
        const row = page.getByRole('link', { name: `Operation ${mine.id}` });
        await row.waitFor();
        // The host's session cookie carried the calls: no API key was asked for, alice's operation is not there.
        expect(await page.getByRole('dialog').count()).toBe(0);
        expect(await page.getByRole('link', { name: `Operation ${theirs.id}` }).count()).toBe(0);
        await page.screenshot({ path: join(ARTIFACTS, 'console-list.png'), fullPage: true });
        await row.click();
        await page.getByRole('button', { name: 'Approve' }).click();
        await until(() => page.getByTestId('operation-status').getAttribute('data-status'), (status) => status === 'completed', 'the completed status on the page');
        await page.locator('li[data-role="assistant"]', { hasText: 'Done: order B-7007 refunded' }).waitFor();
        await page.screenshot({ path: join(ARTIFACTS, 'console-approved.png'), fullPage: true });
        expect((await host('bob-token').get(`/agents/v1/operations/${mine.id}`)).body).toMatchObject({ status: 'completed', reason: 'done' });
      } finally {
        await browser.close();
      }
    });
  });
});
