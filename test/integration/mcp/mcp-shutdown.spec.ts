/**
 * SPEC G4 with a REAL MCP server: `app.close()` while an agent's MCP tool call is in flight. The clients
 * close only after the step ended, so the call either finishes within the grace period and its real result
 * is published, or it is cut and publishes nothing. Never a result made from a closed client
 * (`Error: MCP server … Connection closed`). The step is handed back (G4), so the app started again on the
 * same database takes the operation over (G2) and ends it `done` with the real result.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { HookInvocation, McpRequestContext, OnHook, RuntimeShuttingDownError } from '../../../src/index.js';
import { bootRuntime, guardUnhandledRejections, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { startMcpServer, type TestMcpServer } from './mcp-test-server.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

const TOKEN = 'mcp-shutdown-token-7c21';

const config = (url: string) => scriptedConfig({
  system: 'mcp-shutdown-test',
  mcpServers: { kb: { url: url } },
  models: {
    default: [toolCalls(call('kb/slow')), answer('The knowledge base said: {{lastToolResult}}')],
  },
  agents: {
    researcher: { model: 'default', tools: ['mcp:kb'] },
  },
});

@Injectable()
class KbAuth {
  @OnHook('before_mcp_request')
  inject(invocation: HookInvocation): McpRequestContext {
    return invocation.payloadAs(McpRequestContext).withHeaders({ Authorization: `Bearer ${TOKEN}` });
  }
}

/** Set per test: what the app's own `onModuleDestroy` does (Nest runs it before `beforeApplicationShutdown`). */
let onDestroy: () => void = () => undefined;

@Injectable()
class DuringClose implements OnModuleDestroy {
  onModuleDestroy(): void {
    onDestroy();
  }
}

guardUnhandledRejections();

let kb: TestMcpServer;
let dbDir: string;

beforeEach(async () => {
  kb = await startMcpServer(TOKEN, 0, { slowTool: true });
  dbDir = mkdtempSync(join(tmpdir(), 'agent-hooks-g4-'));
});

afterEach(async () => {
  onDestroy = () => undefined;
  await kb?.close();
  rmSync(dbDir, { recursive: true, force: true });
});

const database = () => `sqlite:${join(dbDir, 'db.sqlite')}`;

/** The app started again on the same file: its reconciler takes the handed-back operation over (G2). */
async function afterRestart(operationId: string, beforeItEnds: () => void = () => undefined) {
  const restarted = await bootRuntime({ config: config(kb.url), providers: [KbAuth], database: database(), module: { recovery: { reconcileEveryMs: 200 } } });
  try {
    beforeItEnds();
    const result = await within(restarted.runtime.result(operationId), 'the operation after the restart', 20_000);
    return { result, messages: await restarted.store.messages(operationId) };
  } finally {
    await restarted.close();
  }
}

async function startSlowCall(app: RuntimeApp) {
  const { operationId, done } = await app.runtime.execAgent({ agentId: 'researcher', prompt: 'hello' });
  await within(kb.slowCallArrived(), 'the slow call reached the MCP server', 20_000);
  return { operationId, done };
}

describe('G4 shutdown during an MCP tool call', () => {
  it('G4 a call that finishes within the grace period publishes its real result; clients close after it', async () => {
    const app = await bootRuntime({ config: config(kb.url), providers: [KbAuth, DuringClose], database: database() });
    const { operationId, done } = await startSlowCall(app);
    // The server answers once the close has begun (after every module's onModuleDestroy started).
    onDestroy = () => kb.releaseSlow();
    await app.close();
    // The closed app's `done` cannot settle: it says so instead of hanging.
    await expect(done).rejects.toBeInstanceOf(RuntimeShuttingDownError);

    const { result, messages } = await afterRestart(operationId);
    const tools = messages.filter((m) => m.role === 'tool');
    // The real result, published once: the restarted app goes on from it and does not call the tool again.
    expect(tools).toHaveLength(1);
    expect(tools[0]).toMatchObject({ content: 'slow: done', identifier: 'kb', apiName: 'slow' });
    expect(tools[0]!.error).toBeUndefined();
    expect(messages.some((m) => /Connection closed|Error:/.test(m.content ?? ''))).toBe(false);
    expect(result).toMatchObject({ reason: 'done', content: 'The knowledge base said: slow: done' });
  }, 60_000);

  it('G4 a call still running when the grace period ends is cut and publishes nothing', async () => {
    const app = await bootRuntime({ config: config(kb.url), providers: [KbAuth], database: database(), module: { shutdown: { graceMs: 300 } } });
    const { operationId, done } = await startSlowCall(app);
    await app.close(); // the slow call is never released while the app is open
    await expect(done).rejects.toBeInstanceOf(RuntimeShuttingDownError);

    // After the restart the cut call runs again (a plain call may, SPEC G2) and this time is answered.
    const { result, messages } = await afterRestart(operationId, () => kb.releaseSlow());
    const tools = messages.filter((m) => m.role === 'tool');
    expect(tools).toHaveLength(1);
    expect(tools[0]).toMatchObject({ content: 'slow: done' });
    expect(messages.some((m) => /Connection closed|Error:/.test(m.content ?? ''))).toBe(false);
    expect(result).toMatchObject({ reason: 'done', content: 'The knowledge base said: slow: done' });
  }, 60_000);
});
