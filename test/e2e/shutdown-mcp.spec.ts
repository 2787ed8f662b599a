/**
 * SPEC G4 on the BUILT server (`agentctl serve` as a child process): SIGTERM while an agent's call to a REAL
 * MCP server is in flight and outlasts the grace period. The call is cut and publishes nothing — never
 * `Error: MCP server … Connection closed` —, the step is handed back (lease released), the server exits 0;
 * after a restart on the same database the call runs again and its REAL result is published, and the
 * operation ends `done` (issue 13, Tests).
 */
import { jest } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiClient, until } from './support/http-client.js';
import { startHeldMcpServer, type HeldMcpServer } from './support/held-mcp-server.js';
import { ensureBuilt, startServer, type ServerProcess } from './support/server-process.js';
import { answer, call, scriptedConfig, toolCalls } from '../support/scripted-config.js';

jest.setTimeout(90_000);

let dir: string;
let kb: HeldMcpServer;
const running: ServerProcess[] = [];

beforeAll(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'agent-hooks-g4-e2e-'));
  kb = await startHeldMcpServer({ label: 'kb' });
  writeFileSync(
    join(dir, 'agents.yaml'),
    scriptedConfig({
      system: 'g4-e2e',
      mcpServers: { kb: { url: kb.url } },
      models: {
        default: [toolCalls(call('kb/held', { tag: 'slow' })), answer('The knowledge base said: {{lastToolResult}}')],
      },
      agents: {
        researcher: { model: 'default', tools: ['mcp:kb'] },
      },
    }),
  );
});

afterAll(async () => {
  for (const server of running) await server.stop();
  await kb?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function start(database: string): Promise<ServerProcess> {
  const server = await startServer({ config: join(dir, 'agents.yaml'), database, env: { SHUTDOWN_GRACE_MS: '300' } });
  running.push(server);
  return server;
}

type Message = { role: string; content?: string; toolCallId?: string };

describe('G4 SIGTERM during an MCP tool call (agentctl serve)', () => {
  it('G4 a call cut at the end of the grace period publishes no made-up result; exit 0; after the restart the call runs again, its real result is published and the operation ends done', async () => {
    const database = `sqlite:${join(dir, 'g4.sqlite')}`;
    const first = await start(database);
    const created = await apiClient(first.url).post('/v1/operations', { agentId: 'researcher', prompt: 'hello' });
    expect(created.status).toBe(201);
    const operationId = created.body.operationId as string;
    await kb.untilArrivals('slow', 1); // the call is held by the MCP server while the server stops

    expect(await first.stop()).toBe(0);

    const second = await start(database);
    const api = apiClient(second.url);
    const messages = async () => (await api.get(`/v1/operations/${operationId}/messages`)).body.messages as Message[];
    // The handed-back step is taken up again: the call arrives a second time (still held), or — if the engine
    // does not re-run it — the operation ends without it. Either way nothing was published for it so far.
    const resumed = await until(
      () => api.get(`/v1/operations/${operationId}`),
      (r) => kb.arrivals('slow') >= 2 || r.body?.status === 'completed',
      'the cut call to run again after the restart (or the operation to end)',
      30_000,
    ).catch((error: Error) => error);
    const beforeRelease = await messages();
    process.stderr.write(
      `[shutdown-mcp] after the restart: ${kb.arrivals('slow')} arrival(s) of the call, ${Date.now() - second.listeningAt} ms after "listening"; ` +
        `operation ${JSON.stringify(resumed instanceof Error ? resumed.message : { status: resumed.body?.status, reason: resumed.body?.reason })}\n`,
    );
    expect(beforeRelease.filter((m) => m.role === 'tool')).toEqual([]);
    kb.releaseAll();

    const operation = await until(() => api.get(`/v1/operations/${operationId}`), (r) => r.body?.status === 'completed', 'the operation to complete after the restart', 30_000).catch(
      async () => api.get(`/v1/operations/${operationId}`),
    );
    const published = await messages();
    expect({ status: operation.body?.status, reason: operation.body?.reason, arrivals: kb.arrivals('slow'), tools: published.filter((m) => m.role === 'tool').map((m) => m.content) }).toEqual({
      status: 'completed',
      reason: 'done',
      arrivals: 2,
      tools: ['held slow: done'],
    });
    expect(published.some((m) => /Connection closed|Error:/.test(m.content ?? ''))).toBe(false);
    expect(published.at(-1)?.content).toBe('The knowledge base said: held slow: done');
    expect(await second.stop()).toBe(0);
  });
});
