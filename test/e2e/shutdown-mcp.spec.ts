/**
 * SPEC G4 on the BUILT server (`agentctl serve` as a child process): SIGTERM while an agent's call to a REAL
 * MCP server is in flight and outlasts the grace period. The call is cut and publishes nothing — never
 * `Error: MCP server … Connection closed` —, the operation does not end `done`, and the server exits 0.
 */
import { jest } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMcpServer, type TestMcpServer } from '../integration/mcp/mcp-test-server.js';
import { apiClient, until } from './support/http-client.js';
import { ensureBuilt, startServer, type ServerProcess } from './support/server-process.js';

jest.setTimeout(120_000);

let dir: string;
let kb: TestMcpServer;
const running: ServerProcess[] = [];

beforeAll(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'agent-hooks-g4-e2e-'));
  kb = await startMcpServer(null, 0, { slowTool: true });
  writeFileSync(
    join(dir, 'agents.yaml'),
    `
system: g4-e2e
mcpServers:
  kb: { url: "${kb.url}" }
models:
  default:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: kb, apiName: slow, args: {} } ]
      - content: "The knowledge base said: {{lastToolResult}}"
agents:
  researcher: { model: default, tools: [ "mcp:kb" ] }
`,
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

describe('G4 SIGTERM during an MCP tool call (agentctl serve)', () => {
  it('G4 a call cut at the end of the grace period publishes no made-up result; the operation is not done; exit 0', async () => {
    const database = `sqlite:${join(dir, 'g4.sqlite')}`;
    const first = await start(database);
    const created = await apiClient(first.url).post('/v1/operations', { agentId: 'researcher', prompt: 'hello' });
    expect(created.status).toBe(201);
    const operationId = created.body.operationId as string;
    await kb.slowCallArrived(); // the call is held by the MCP server while the server stops

    expect(await first.stop()).toBe(0);

    const second = await start(database);
    const api = apiClient(second.url);
    const operation = await until(() => api.get(`/v1/operations/${operationId}`), (r) => r.status === 200, 'operation readable after restart');
    expect(operation.body).toMatchObject({ status: 'completed', reason: 'interrupted' });
    const messages = (await api.get(`/v1/operations/${operationId}/messages`)).body.messages as { role: string; content?: string }[];
    expect(messages.filter((m) => m.role === 'tool')).toEqual([]);
    expect(messages.some((m) => /Connection closed|Error:/.test(m.content ?? ''))).toBe(false);
    expect(await second.stop()).toBe(0);
  });
});
