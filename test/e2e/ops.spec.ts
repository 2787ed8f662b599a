/**
 * Issue 7 item 4 on the BUILT server, over HTTP only: structured JSON logs with request ids (S1: never the
 * Authorization header, a query string or a prompt), `/metrics` counters that move, graceful shutdown on
 * SIGTERM with an operation waiting for approval (exit 0, `on_engine_stop` ran, restart on the same SQLite
 * file, still waiting, approve, completes), and the periodic purge of `serve --purge-older-than`.
 */
import { jest } from '@jest/globals';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiClient, until } from './support/http-client.js';
import { ensureBuilt, startServer, type ServerProcess } from './support/server-process.js';
import { answer, call, scriptedConfig, toolCalls } from '../support/scripted-config.js';

// Each test spawns the built CLI or server (a few seconds each on a busy 2-core machine).
jest.setTimeout(120_000);

const CONFIG = scriptedConfig({
  system: 'ops-e2e',
  models: {
    clock: [toolCalls(call('clock/now')), answer('It is {{lastToolResult}}.')],
  },
  agents: {
    assistant: { model: 'clock', tools: ['clock/now'] },
    approver: { model: 'clock', tools: ['clock/now'], approval: ['^clock/'] },
  },
  hooks: { after_tool_call: [{ plugin: 'ops_probe', method: 'audit', failure_policy: 'warn' }], on_engine_stop: [{ plugin: 'ops_probe', method: 'engineStopped', failure_policy: 'warn' }] },
});

// on_engine_stop leaves a mark in a file, so the test can see it ran during the shutdown.
const PROBE = `import { appendFileSync } from 'node:fs';
export class OpsProbe {
  audit() {}
  engineStopped(invocation) {
    appendFileSync(process.env.OPS_E2E_MARKER, 'on_engine_stop ' + invocation.payload.systemName + '\\n');
  }
}
`;

const API_KEY = 'sk-e2e-logkey-9931';
const QUERY_SECRET = 'query-secret-5521';
const PROMPT_SECRET = 'prompt-secret-7713';

let dir: string;
let config: string;
let marker: string;
const running: ServerProcess[] = [];

function start(database: string, options: { env?: Record<string, string>; args?: string[] } = {}): Promise<ServerProcess> {
  return startServer({ config, database, env: { OPS_E2E_MARKER: marker, ...options.env }, ...(options.args ? { args: options.args } : {}) }).then((server) => {
    running.push(server);
    return server;
  });
}

beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'agent-hooks-ops-e2e-'));
  config = join(dir, 'agents.yaml');
  marker = join(dir, 'marker.txt');
  writeFileSync(config, CONFIG);
  mkdirSync(join(dir, 'plugins', 'hooks'), { recursive: true });
  writeFileSync(join(dir, 'plugins', 'plugins.toml'), '[hooks.plugins]\nops_probe = "plugins/hooks/ops-probe:OpsProbe"\n');
  writeFileSync(join(dir, 'plugins', 'hooks', 'ops-probe.mjs'), PROBE);
});

afterAll(async () => {
  for (const server of running) await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Every line the server printed, parsed: each one must be a JSON object. */
function jsonLines(server: ServerProcess): Record<string, unknown>[] {
  return server
    .output()
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON log line: ${line}`);
      }
    });
}

async function metric(url: string, sample: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line ? Number(line.slice(sample.length + 1)) : 0;
}

describe('structured JSON logs, request ids and /metrics', () => {
  let server: ServerProcess;

  beforeAll(async () => {
    server = await start(`sqlite:${join(dir, 'logs.sqlite')}`, { env: { AGENT_HOOKS_API_KEYS: `${API_KEY}:alice` } });
  });

  it('S1: one JSON object per line; a request line has requestId, method, route, status, latencyMs — never the key, the query string or the prompt', async () => {
    const api = apiClient(server.url, API_KEY);
    const created = await api.post(`/v1/operations?token=${QUERY_SECRET}`, { agentId: 'assistant', prompt: PROMPT_SECRET }, { 'x-request-id': 'client-id-42' });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-request-id')).toBe('client-id-42');
    // A request id that is not a short printable token is replaced by a fresh UUID.
    const odd = await api.get(`/v1/operations/${created.body.operationId}`, { 'x-request-id': 'has spaces and "quotes"' });
    const generated = odd.headers.get('x-request-id')!;
    expect(generated).toMatch(/^[0-9a-f-]{36}$/);
    await until(() => api.get(`/v1/operations/${created.body.operationId}`), (r) => r.body.status === 'completed', 'operation completes');
    const unauthorized = await fetch(`${server.url}/v1/operations/${created.body.operationId}`, { headers: { authorization: 'Bearer wrong-key-0007' } });
    expect(unauthorized.status).toBe(401);

    // The line is written when the response finishes: wait for the last request's line.
    await until(async () => jsonLines(server), (all) => all.some((l) => l.context === 'Http' && l.status === 401), 'the 401 request line');
    const lines = jsonLines(server);
    const requests = lines.filter((line) => line.context === 'Http');
    expect(requests).toContainEqual(
      expect.objectContaining({ level: 'info', requestId: 'client-id-42', method: 'POST', route: '/v1/operations', status: 201, latencyMs: expect.any(Number) }),
    );
    expect(requests).toContainEqual(expect.objectContaining({ requestId: generated, method: 'GET', route: '/v1/operations/:id', status: 200 }));
    expect(requests).toContainEqual(expect.objectContaining({ method: 'GET', route: '/v1/operations/:id', status: 401 }));
    for (const line of lines) {
      expect(line).toEqual(expect.objectContaining({ level: expect.any(String), time: expect.any(String), msg: expect.any(String) }));
    }
    const output = server.output();
    for (const secret of [API_KEY, 'wrong-key-0007', QUERY_SECRET, PROMPT_SECRET]) expect(output).not.toContain(secret);
  });

  it('/metrics answers in the Prometheus format without a key; hook and operation counters move with an operation', async () => {
    const response = await fetch(`${server.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const invocations = 'agent_hooks_hook_invocations_total{point="after_tool_call",source="config",outcome="ok"}';
    const latency = 'agent_hooks_hook_latency_seconds_count{point="after_tool_call"}';
    const completed = 'agent_hooks_operations{status="completed"}';
    const before = { invocations: await metric(server.url, invocations), latency: await metric(server.url, latency), completed: await metric(server.url, completed) };

    const api = apiClient(server.url, API_KEY);
    const created = await api.post('/v1/operations', { agentId: 'assistant', prompt: 'What time is it?' });
    await until(() => api.get(`/v1/operations/${created.body.operationId}`), (r) => r.body.status === 'completed', 'operation completes');

    expect(await metric(server.url, invocations)).toBe(before.invocations + 1);
    expect(await metric(server.url, latency)).toBe(before.latency + 1);
    expect(await metric(server.url, completed)).toBe(before.completed + 1);
    expect(await metric(server.url, 'agent_hooks_operations{status="running"}')).toBe(0);
  });
});

describe('graceful shutdown on SIGTERM', () => {
  it('an operation waiting for approval survives: exit 0, on_engine_stop ran; after a restart on the same file it is still waiting, and approving completes it', async () => {
    const database = `sqlite:${join(dir, 'shutdown.sqlite')}`;
    const first = await start(database);
    const api = apiClient(first.url);
    const created = await api.post('/v1/operations', { agentId: 'approver', prompt: 'What time is it?' });
    expect(created.status).toBe(201);
    const operationId = created.body.operationId as string;
    const waiting = await until(() => api.get(`/v1/operations/${operationId}`), (r) => r.body.status === 'waiting', 'operation waits for approval');
    expect(waiting.body.pendingTools).toEqual([expect.objectContaining({ identifier: 'clock', apiName: 'now', kind: 'approval' })]);

    expect(await first.stop()).toBe(0);
    const shutdown = jsonLines(first).map((line) => line.msg);
    expect(shutdown).toContain('SIGTERM received; shutting down');
    expect(shutdown).toContain('shut down');
    expect(readFileSync(marker, 'utf8')).toContain('on_engine_stop ops-e2e\n');

    const second = await start(database);
    const again = apiClient(second.url);
    const restored = await again.get(`/v1/operations/${operationId}`);
    expect(restored.body).toMatchObject({ operationId, status: 'waiting', pendingTools: [expect.objectContaining({ kind: 'approval' })] });
    const toolCallId = restored.body.pendingTools[0].toolCallId as string;
    expect((await again.post(`/v1/operations/${operationId}/interventions/${toolCallId}`, { action: 'approve' })).status).toBe(200);
    const done = await until(() => again.get(`/v1/operations/${operationId}`), (r) => r.body.status === 'completed', 'operation completes after approval');
    expect(done.body.reason).toBe('done');
    const messages = await again.get(`/v1/operations/${operationId}/messages`);
    expect(messages.body.messages.at(-1).content).toMatch(/^It is \d{4}-\d{2}-\d{2}T/);
    expect(await second.stop()).toBe(0);
  });
});

describe('serve --purge-older-than (periodic retention)', () => {
  it('a completed operation older than the age is purged by the running server; its routes answer 404 afterwards', async () => {
    const server = await start(`sqlite:${join(dir, 'purge.sqlite')}`, { args: ['--purge-older-than', '1s', '--purge-every', '1s'] });
    const api = apiClient(server.url);
    const created = await api.post('/v1/operations', { agentId: 'assistant', prompt: 'What time is it?' });
    const operationId = created.body.operationId as string;
    await until(() => api.get(`/v1/operations/${operationId}`), (r) => r.body.status === 'completed', 'operation completes');
    const waiting = await api.post('/v1/operations', { agentId: 'approver', prompt: 'What time is it?' });
    await until(() => api.get(`/v1/operations/${waiting.body.operationId}`), (r) => r.body.status === 'waiting', 'operation waits');

    await until(() => api.get(`/v1/operations/${operationId}`), (r) => r.status === 404, 'the completed operation is purged', 10_000);
    expect((await api.get(`/v1/operations/${operationId}/timeline`)).status).toBe(404);
    // The waiting one stays, however old.
    expect((await api.get(`/v1/operations/${waiting.body.operationId}`)).body.status).toBe('waiting');
    // The purge logs once its transaction committed, so the 404 above can be seen before the line arrives.
    const purgedLine = (lines: Record<string, unknown>[]) => lines.some((line) => line.context === 'Retention' && /^purged 1 operations completed before /.test(String(line.msg)));
    expect(purgedLine(await until(async () => jsonLines(server), purgedLine, 'the purge log line'))).toBe(true);
    expect(await server.stop()).toBe(0);
  });
});
