/**
 * SPEC F2 and G2 with real processes: two local `agentctl serve` processes share one database (SQLite file
 * or PostgreSQL schema). The first runs three operations that call `charge` on a real MCP server that charges once per
 * idempotency key and never answers a key's first call (the effect is made, the answer lost): an approved
 * call of a server declared `idempotent: true`, a plain call of the same server, and an approved call of a
 * server not declared idempotent. The second process starts while the calls are in flight, then the first is
 * killed with SIGKILL; the second takes the operations over. The idempotent calls run again once, with the same key (in `_meta` and the
 * `Idempotency-Key` header): one effect, one published result. The non-idempotent approved call is not run
 * again: its result is the "outcome unknown" receipt.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKeyedMcpServer, type KeyedMcpServer } from '../integration/mcp/keyed-mcp-server.js';
import { appDatabases, type DriverName } from '../integration/persistence/test-databases.js';
import { apiClient, until } from './support/http-client.js';
import { ensureBuilt, startServer, type ServerProcess } from './support/server-process.js';
import { answer, call, scriptedConfig, toolCalls } from '../support/scripted-config.js';

const config = (url: string) => scriptedConfig({
  system: 'f2-e2e',
  mcpServers: { pay: { url: url, idempotent: true }, payplain: { url: url } },
  models: {
    pay: [toolCalls(call('pay/charge', { amount: 5 })), answer('paid: {{lastToolResult}}')],
    payplain: [toolCalls(call('payplain/charge', { amount: 7 })), answer('paid: {{lastToolResult}}')],
  },
  agents: {
    approvedIdempotent: { model: 'pay', tools: ['mcp:pay'], approval: ['charge$'] },
    plainIdempotent: { model: 'pay', tools: ['mcp:pay'] },
    approvedPlain: { model: 'payplain', tools: ['mcp:payplain'], approval: ['charge$'] },
  },
});

/** Short leases: the survivor takes over within seconds (SPEC G2's bound scales with them). */
const RECOVERY_ENV = { AGENT_HOOKS_LEASE_MS: '3000', AGENT_HOOKS_RECONCILE_EVERY_MS: '1000' };

interface ToolMessage {
  role: string;
  content: string;
  success?: boolean;
  state?: Record<string, unknown>;
}

const databases = await appDatabases('f2-e2e');

databases.describeEach('F2 an idempotent call re-run after kill -9, two local processes (%s)', (driver: DriverName) => {
  let dir: string;
  let pay: KeyedMcpServer;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'agent-hooks-f2-e2e-'));
    pay = await startKeyedMcpServer({ holdFirstCharge: true });
    writeFileSync(join(dir, 'agents.yaml'), config(pay.url));
  }, 240_000);

  afterAll(async () => {
    for (const server of servers) await server.stop();
    await pay?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const start = async (): Promise<ServerProcess> => {
    const server = await startServer({ config: join(dir, 'agents.yaml'), database: databases.databaseFor(driver, 'f2-e2e'), env: RECOVERY_ENV });
    servers.push(server);
    return server;
  };

  it('F2: killed mid-call, the idempotent calls run again once with the same key (one effect, one result); the non-idempotent approved call gets the receipt', async () => {
    const first = await start();
    const api1 = apiClient(first.url);
    const ids: Record<string, string> = {};
    for (const agentId of ['approvedIdempotent', 'plainIdempotent', 'approvedPlain']) {
      const created = await api1.post('/v1/operations', { agentId, prompt: 'pay' });
      expect(created.status).toBe(201);
      ids[agentId] = created.body.operationId as string;
    }
    for (const agentId of ['approvedIdempotent', 'approvedPlain']) {
      const waiting = await until(() => api1.get(`/v1/operations/${ids[agentId]}`), (r) => r.body?.pendingTools?.length === 1, `${agentId} waits for approval`);
      const pending = waiting.body.pendingTools[0] as { toolCallId: string; idempotencyKey: string };
      expect(pending.idempotencyKey).toMatch(/^nah_/);
      expect((await api1.post(`/v1/operations/${ids[agentId]}/interventions/${pending.toolCallId}`, { action: 'approve' })).status).toBeLessThan(300);
    }
    // All three charges reached the server (effects made, answers held) — then the executor dies.
    await pay.callsOf('charge', 3);
    // A second process joins, then the executor dies mid-call: the takeover is by a process that never saw the calls.
    const survivor = await start();
    await first.kill();
    const api = apiClient(survivor.url);

    const done: Record<string, { reason?: string; tools: ToolMessage[] }> = {};
    for (const [agentId, id] of Object.entries(ids)) {
      const terminal = await until(() => api.get(`/v1/operations/${id}`), (r) => r.body?.status === 'completed', `${agentId} completes after the takeover`, 60_000);
      const tools = ((await api.get(`/v1/operations/${id}/messages`)).body.messages as ToolMessage[]).filter((m) => m.role === 'tool');
      done[agentId] = { reason: terminal.body.reason as string, tools };
    }

    // Each idempotent call: two calls (the killed one and the re-run), one key, in _meta and header; one effect.
    const byKey = new Map<string, number>();
    for (const call of pay.calls) {
      expect(call.headerKey).toBe(call.metaKey);
      byKey.set(call.metaKey!, (byKey.get(call.metaKey!) ?? 0) + 1);
    }
    expect([...byKey.values()].sort()).toEqual([1, 2, 2]);
    for (const key of byKey.keys()) expect(pay.effects.get(key)).toBe(1);

    expect(done.approvedIdempotent).toEqual({ reason: 'done', tools: [expect.objectContaining({ content: 'charged 5' })] });
    expect(done.plainIdempotent).toEqual({ reason: 'done', tools: [expect.objectContaining({ content: 'charged 5' })] });
    expect(done.approvedPlain!.reason).toBe('done');
    expect(done.approvedPlain!.tools).toEqual([expect.objectContaining({ state: { execution: 'unknown_outcome' } })]);
  }, 180_000);
});
