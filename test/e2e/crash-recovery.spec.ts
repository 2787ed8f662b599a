/**
 * SPEC G2/G3 on the BUILT server (issue 13, Tests): ONE local `agentctl serve` child process brings five
 * operations into five states, is killed with SIGKILL (a crash: no shutdown of any kind) and restarted on
 * the same database; then the test releases whatever it held. Per operation:
 * (a) mid-run — a plain tool executing (an MCP tool of the test, held until released);
 * (b) mid-approved-call — an approval-required tool, approved over HTTP, executing (held the same way);
 * (c) during a slow `afterHumanIntervention` webhook — approved over HTTP while the receiver holds it;
 * (d) mid-deferred completion — `POST …/tool-results` of a client tool while its `afterToolCall` control
 *     webhook is held;
 * (e) mid-`onComplete` — the `onComplete` webhook held when the kill lands.
 * After the restart every operation reaches exactly one terminal state, with exactly one `onComplete` as a
 * logical event (one distinct `webhook-id`; deliveries at least once), no tool result published twice; (b)'s
 * approved call did not run again and its result is the "outcome unknown" receipt; (c)'s approval is kept
 * (no second approval; approving again is 409) and `afterHumanIntervention` is delivered again with the same
 * webhook-id; (a)'s plain call may run again (documented) and the operation ends `done`.
 * The time from the restart's "listening" line to each terminal state is printed on stderr (SPEC: within
 * one lease plus one reconcile interval, 10 s + 5 s by default); no timing is asserted.
 * Why MCP tools: the standalone server loads no local tool from a plugin (see held-mcp-server.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appDatabases, type DriverName } from '../integration/persistence/test-databases.js';
import { apiClient, until, type ApiClient, type Reply } from './support/http-client.js';
import { startHeldMcpServer, type HeldMcpServer } from './support/held-mcp-server.js';
import { startHoldingReceiver, type Delivery, type HoldingReceiver } from './support/holding-receiver.js';
import { ensureBuilt, startServer, type ServerProcess } from './support/server-process.js';
import { answer, call, scriptedConfig, toolCalls } from '../support/scripted-config.js';

/** SPEC G2: one lease (10 s) plus one reconcile interval (5 s) by default; the test waits well past it. */
const RECOVERY_BOUND_MS = 15_000;
const WAIT_FOR_RECOVERY_MS = 35_000;

const config = (mcpUrl: string) => scriptedConfig({
  system: 'crash-e2e',
  mcpServers: { kb: { url: mcpUrl } },
  models: {
    held: [toolCalls(call('kb/held', { tag: '{{prompt}}' })), answer('The tool said: {{lastToolResult}}')],
    clock: [toolCalls(call('clock/now')), answer('It is {{lastToolResult}}.')],
    browsing: [toolCalls(call('browser/open', { url: 'https://example.com/' })), answer('The page said: {{lastToolResult}}')],
  },
  clientTools: { 'browser/open': { description: 'Opens a page in the user\'s browser (run by the client)', parameters: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] } } },
  agents: {
    runner: { model: 'held', tools: ['mcp:kb'] },
    gated: { model: 'held', tools: ['mcp:kb'], approval: ['^kb/held$'] },
    approver: { model: 'clock', tools: ['clock/now'], approval: ['^clock/'] },
    browser: { model: 'browsing', tools: ['browser/*'] },
    finisher: { model: 'clock', tools: ['clock/now'] },
  },
});

type Case = 'a' | 'b' | 'c' | 'd' | 'e';
const CASES: Record<Case, { agentId: string; title: string }> = {
  a: { agentId: 'runner', title: 'mid-run (a plain tool executing)' },
  b: { agentId: 'gated', title: 'mid-approved-call (an approved tool executing)' },
  c: { agentId: 'approver', title: 'during a slow afterHumanIntervention webhook' },
  d: { agentId: 'browser', title: 'mid-deferred completion (afterToolCall control held)' },
  e: { agentId: 'finisher', title: 'mid-onComplete (the onComplete webhook held)' },
};
const DEFERRED_RESULT = 'page: Example Domain';
const SIGNING_SECRET = `whsec_${randomBytes(24).toString('base64')}`;

interface ToolMessage {
  role: string;
  toolCallId?: string;
  content: string;
  state?: Record<string, unknown>;
}

interface Observed {
  operationId: string;
  /** GET /v1/operations/:id just before the kill. */
  beforeKill: any;
  /** The first completed view after the restart (undefined: none within the wait). */
  terminal?: any;
  /** Milliseconds from the restart's "listening" to the first completed view. */
  terminalAfterMs?: number;
  /** The last view read (after the onComplete deliveries settled). */
  last: any;
  /** Milliseconds from the restart's "listening" to the first onComplete delivery after it. */
  onCompleteAfterMs?: number;
  messages: ToolMessage[];
}

const databases = await appDatabases('crash-e2e');

databases.describeEach('G2/G3 SIGKILL of a local agentctl serve on %s, restart on the same database', (driver: DriverName) => {
  let dir: string;
  let mcp: HeldMcpServer;
  let receiver: HoldingReceiver;
  const servers: ServerProcess[] = [];
  let api: ApiClient;
  let restartedAt = 0;
  const ids = {} as Record<Case, string>;
  const observed = {} as Record<Case, Observed>;
  /** The webhook-ids of what was held when the kill landed. */
  let heldHumanWebhookId: string | undefined;
  let heldOnCompleteWebhookId: string | undefined;
  let approvalCallId = '';
  let humanCallId = '';
  let deferredCallId = '';

  const start = async (database: string): Promise<ServerProcess> => {
    const server = await startServer({
      config: join(dir, 'agents.yaml'),
      database,
      // The test's webhook receiver listens on loopback; `webhook-id` is sent only with a signing secret.
      env: { AGENT_HOOKS_WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8', AGENT_HOOKS_WEBHOOK_SECRET: SIGNING_SECRET },
    });
    servers.push(server);
    return server;
  };
  const operation = (id: string) => api.get(`/v1/operations/${id}`);
  const waiting = (id: string) => until(() => operation(id), (r) => r.body?.status === 'waiting' && (r.body.pendingTools?.length ?? 0) > 0, `operation ${id} to wait`, 30_000);
  const toolMessages = async (id: string): Promise<ToolMessage[]> => ((await api.get(`/v1/operations/${id}/messages`)).body.messages as ToolMessage[]).filter((m) => m.role === 'tool');
  const onCompletes = (c: Case): Delivery[] => receiver.at('/done', ids[c]);

  beforeAll(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), `agent-hooks-crash-${driver}-`));
    mcp = await startHeldMcpServer({ label: `kb-${driver}` });
    // Held from the start: every onComplete (only (e) reaches it before the kill), (c)'s decision webhook,
    // (d)'s after-control. Released after the restart.
    receiver = await startHoldingReceiver(['/done', '/human', '/after']);
    writeFileSync(join(dir, 'agents.yaml'), config(mcp.url));
    const database = databases.databaseFor(driver, 'crash');
    const first = await start(database);
    api = apiClient(first.url);

    const longWebhook = (path: string) => ({ url: receiver.url(path), timeout: 120 });
    const hooksOf = (c: Case) => [
      { id: 'done', type: 'onComplete', webhook: longWebhook('/done') },
      ...(c === 'c' ? [{ id: 'human', type: 'afterHumanIntervention', webhook: longWebhook('/human') }] : []),
      ...(c === 'd' ? [{ id: 'after-control', type: 'afterToolCall', webhook: { ...longWebhook('/after'), responseHandling: 'toolCall' } }] : []),
    ];
    for (const c of Object.keys(CASES) as Case[]) {
      const created = await api.post('/v1/operations', { agentId: CASES[c].agentId, prompt: c, hooks: hooksOf(c) });
      if (created.status !== 201) throw new Error(`starting (${c}) answered ${created.status}: ${JSON.stringify(created.body)}`);
      ids[c] = created.body.operationId as string;
    }

    // (a) the plain tool is executing.
    await mcp.untilArrivals('a', 1);
    // (b) approved over HTTP, then executing.
    const gated = await waiting(ids.b);
    approvalCallId = gated.body.pendingTools[0].toolCallId as string;
    const approvedB = await api.post(`/v1/operations/${ids.b}/interventions/${approvalCallId}`, { action: 'approve' });
    if (approvedB.status !== 200) throw new Error(`approving (b) answered ${approvedB.status}: ${JSON.stringify(approvedB.body)}`);
    await mcp.untilArrivals('b', 1);
    // (c) approved over HTTP; the afterHumanIntervention delivery is held (the request waits for it).
    humanCallId = (await waiting(ids.c)).body.pendingTools[0].toolCallId as string;
    const approvingC = api.post(`/v1/operations/${ids.c}/interventions/${humanCallId}`, { action: 'approve' }).catch((error: unknown) => error);
    heldHumanWebhookId = (await receiver.next((d) => d.path === '/human' && d.body?.operationId === ids.c, '(c) afterHumanIntervention')).webhookId;
    // (d) the client's result arrives; its afterToolCall control is held (the request waits for it).
    const deferred = await waiting(ids.d);
    deferredCallId = deferred.body.pendingTools[0].toolCallId as string;
    const completingD = api.post(`/v1/operations/${ids.d}/tool-results/${deferredCallId}`, { content: DEFERRED_RESULT, success: true }).catch((error: unknown) => error);
    await receiver.next((d) => d.path === '/after' && d.body?.operationId === ids.d, '(d) afterToolCall control');
    // (e) its onComplete delivery is held.
    heldOnCompleteWebhookId = (await receiver.next((d) => d.path === '/done' && d.body?.operationId === ids.e, '(e) onComplete')).webhookId;

    for (const c of Object.keys(CASES) as Case[]) observed[c] = { operationId: ids[c], beforeKill: (await operation(ids[c])).body, last: undefined, messages: [] };

    await first.kill();
    await Promise.all([approvingC, completingD]); // both fail: the connection died with the process

    const second = await start(database);
    restartedAt = second.listeningAt;
    api = apiClient(second.url);
    mcp.releaseAll();
    receiver.release();

    // Every operation to a terminal state (or the end of the wait), each timed from "listening".
    const deadline = restartedAt + WAIT_FOR_RECOVERY_MS;
    await Promise.all(
      (Object.keys(CASES) as Case[]).map(async (c) => {
        const seen = await until(
          () => operation(ids[c]),
          (r) => r.body?.status === 'completed' || Date.now() > deadline,
          `(${c}) terminal`,
          WAIT_FOR_RECOVERY_MS + 5_000,
        );
        if (seen.body?.status === 'completed') {
          observed[c].terminal = seen.body;
          observed[c].terminalAfterMs = Date.now() - restartedAt;
        }
      }),
    );
    // Every completed operation's onComplete, at least once after the restart ((e)'s again: it was never answered).
    await Promise.all(
      (Object.keys(CASES) as Case[])
        .filter((c) => observed[c].terminal)
        .map(async (c) => {
          const left = Math.max(5_000, deadline - Date.now());
          const delivery = await receiver.next((d) => d.path === '/done' && d.body?.operationId === ids[c] && d.receivedAt >= restartedAt, `(${c}) onComplete after the restart`, left).catch(() => undefined);
          if (delivery) observed[c].onCompleteAfterMs = delivery.receivedAt - restartedAt;
        }),
    );
    for (const c of Object.keys(CASES) as Case[]) {
      observed[c].last = (await operation(ids[c])).body;
      observed[c].messages = await toolMessages(ids[c]);
      const { terminalAfterMs, onCompleteAfterMs } = observed[c];
      process.stderr.write(
        `[crash-recovery ${driver}] (${c}) ${CASES[c].title}: before the kill ${JSON.stringify(observed[c].beforeKill.status)}; ` +
          `terminal ${terminalAfterMs === undefined ? `NOT reached within ${WAIT_FOR_RECOVERY_MS} ms` : `${terminalAfterMs} ms`} after "listening" ` +
          `(SPEC bound ${RECOVERY_BOUND_MS} ms); onComplete after the restart ${onCompleteAfterMs === undefined ? 'none' : `${onCompleteAfterMs} ms`}; ` +
          `now ${JSON.stringify({ status: observed[c].last?.status, reason: observed[c].last?.reason, pendingTools: observed[c].last?.pendingTools?.length ?? 0 })}\n`,
      );
    }
  }, 120_000);

  afterAll(async () => {
    for (const server of servers) await server.stop();
    await receiver?.close();
    await mcp?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  /** Exactly one terminal state, `done`; one onComplete logical event; no tool result published twice. */
  function expectOneEnd(c: Case): void {
    const { terminal, last, messages } = observed[c];
    // Everything that tells why, in one diff: the first terminal view, the state now, the published results.
    expect({
      terminalAfterRestart: terminal ? { status: terminal.status, reason: terminal.reason } : `none within ${WAIT_FOR_RECOVERY_MS} ms`,
      now: { status: last.status, reason: last.reason, pendingTools: (last.pendingTools ?? []).map((p: { kind: string }) => p.kind) },
      published: messages.length,
    }).toEqual({ terminalAfterRestart: { status: 'completed', reason: 'done' }, now: { status: 'completed', reason: 'done', pendingTools: [] }, published: 1 });
    // The state seen first is the state that stayed (a second terminal transition would change it).
    expect({ status: last.status, reason: last.reason }).toEqual({ status: terminal.status, reason: terminal.reason });
    const deliveries = onCompletes(c);
    expect(deliveries.length).toBeGreaterThanOrEqual(1);
    expect(deliveries[0]!.webhookId).toEqual(expect.any(String));
    expect(new Set(deliveries.map((d) => d.webhookId))).toEqual(new Set([deliveries[0]!.webhookId]));
    expect(deliveries.map((d) => d.body?.reason)).toEqual(deliveries.map(() => 'done'));
    // One tool message per tool call id; each of these scripts makes exactly one call.
    const perCall = new Map<string, number>();
    for (const message of messages) perCall.set(message.toolCallId ?? '?', (perCall.get(message.toolCallId ?? '?') ?? 0) + 1);
    expect([...perCall.entries()]).toEqual([[expect.any(String), 1]]);
  }

  it('G2 (a) mid-run: the plain call may run again (documented); one terminal state, done; one onComplete; its result published once', () => {
    expectOneEnd('a');
    // Whether it ran again or not, what was published is the tool's own answer, never a made-up one.
    expect(observed.a.messages[0]!.content).toBe('held a: done');
    expect(mcp.arrivals('a')).toBeGreaterThanOrEqual(1);
  });

  it('G2 (b) mid-approved-call: the approved call never runs again; its result is the "outcome unknown" receipt; one terminal state, done; one onComplete', () => {
    expect(mcp.arrivals('b')).toBe(1);
    expectOneEnd('b');
    expect(observed.b.messages[0]).toMatchObject({
      toolCallId: approvalCallId,
      content: 'Error: kb/held was started before and its outcome is unknown; it was not run again.',
      state: { execution: 'unknown_outcome' },
    });
  });

  it('G3 (c) during a slow afterHumanIntervention webhook: the approval is kept (no second approval, approving again is 409); the webhook comes again with the same webhook-id; one terminal state, done', async () => {
    expectOneEnd('c');
    expect(observed.c.messages[0]!.content).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    const human = receiver.at('/human', ids.c);
    expect(heldHumanWebhookId).toEqual(expect.any(String));
    expect(human.filter((d) => d.receivedAt >= restartedAt).map((d) => d.webhookId)).toContain(heldHumanWebhookId);
    expect(new Set(human.map((d) => d.webhookId))).toEqual(new Set([heldHumanWebhookId]));
    const again: Reply = await api.post(`/v1/operations/${ids.c}/interventions/${humanCallId}`, { action: 'approve' });
    expect(again.status).toBe(409);
  });

  it('G3 (d) mid-deferred completion: the result posted once is published once, without a second post (a second is 409); one terminal state, done; one onComplete', async () => {
    expectOneEnd('d');
    expect(observed.d.messages[0]).toMatchObject({ toolCallId: deferredCallId, content: DEFERRED_RESULT });
    const again: Reply = await api.post(`/v1/operations/${ids.d}/tool-results/${deferredCallId}`, { content: 'a second result', success: true });
    expect(again.status).toBe(409);
  });

  it('G2 (e) mid-onComplete: onComplete is delivered again after the restart with the same webhook-id (one logical event); one terminal state, done', () => {
    expectOneEnd('e');
    expect(heldOnCompleteWebhookId).toEqual(expect.any(String));
    const deliveries = onCompletes('e');
    expect(deliveries.filter((d) => d.receivedAt >= restartedAt).map((d) => d.webhookId)).toContain(heldOnCompleteWebhookId);
  });
});
