/**
 * SPEC F3 on SQLite and PostgreSQL, with a real MCP server (the SDK's) and real local tools: every call has a
 * deadline — the tool's, else its MCP server's, else the agent's, else 60 s — past which its signal aborts
 * and a tool error of type `timeout` is published; a late result of a tool that ignores its signal is
 * discarded and counted; an idempotent tool with `retry` is tried again with the same key (the server counts
 * the attempts), each failed attempt reported with `willRetry`; a cancel ends a backoff at once.
 */
import { Injectable } from '@nestjs/common';
import { Registry } from 'prom-client';
import type { DispatchedEvent, LocalToolContext, OnToolCallErrorEvent, ToolCallContext } from '../../../src/index.js';
import { LateToolResults } from '../../../src/runtime/tools/late-tool-results.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { ToolMetrics } from '../../../src/server/ops/tool-metrics.js';
import { appDatabases, type DriverName } from '../persistence/test-databases.js';
import { bootRuntime, deferred, eventually, guardUnhandledRejections, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { startKeyedMcpServer, type KeyedMcpServer } from './keyed-mcp-server.js';

const LONG = 600_000;

const config = (url: string) => `
system: f3-deadlines
mcpServers:
  hangs: { url: "${url}", timeoutMs: ${LONG}, tools: { hang: { timeoutMs: 250 } } }
  hangs2: { url: "${url}", timeoutMs: 250 }
  flaky: { url: "${url}", idempotent: true, retry: { attempts: 3, initialDelayMs: 5, maxDelayMs: 20 } }
  flakyonce: { url: "${url}", tools: { flaky: { idempotent: true, retry: { attempts: 2, initialDelayMs: 1 } } } }
  plainflaky: { url: "${url}" }
  slowbackoff: { url: "${url}", idempotent: true, retry: { attempts: 3, initialDelayMs: 3600000, maxDelayMs: 3600000 } }
models:
${['hangs/hang', 'retried/lookup', 'hangs2/hang', 'flaky/flaky', 'flakyonce/flaky', 'plainflaky/flaky', 'slowbackoff/flaky', 'stuck/ignore', 'stuck/own']
  .map((name) => {
    const [identifier, apiName] = name.split('/');
    return `  ${identifier}_${apiName}:\n    provider: scripted\n    costPerTokenUsd: 0\n    script:\n      - toolCalls: [ { identifier: ${identifier}, apiName: ${apiName}, args: {} } ]\n      - content: "saw: {{lastToolResult}}"`;
  })
  .join('\n')}
agents:
  mcpOverride: { model: hangs_hang, tools: [ "mcp:hangs" ], timeoutMs: ${LONG} }
  mcpServer: { model: hangs2_hang, tools: [ "mcp:hangs2" ], timeoutMs: ${LONG} }
  retrier: { model: flaky_flaky, tools: [ "mcp:flaky" ] }
  retryOnce: { model: flakyonce_flaky, tools: [ "mcp:flakyonce" ] }
  noRetry: { model: plainflaky_flaky, tools: [ "mcp:plainflaky" ] }
  backoff: { model: slowbackoff_flaky, tools: [ "mcp:slowbackoff" ] }
  localRetrier: { model: retried_lookup, tools: [ "retried/*" ] }
  localAgentDeadline: { model: stuck_ignore, tools: [ "stuck/*" ], timeoutMs: 200 }
  localOwnDeadline: { model: stuck_own, tools: [ "stuck/*" ], timeoutMs: ${LONG} }
`;

/** `stuck/ignore` ignores its signal and answers when the test releases it (a fresh release per driver). */
let release = deferred<string>();
const ignoreSignals: AbortSignal[] = [];

@Injectable()
class StuckTools {
  @Tool({ identifier: 'stuck', apiName: 'ignore', description: 'ignores its signal', parameters: { type: 'object', properties: {} } })
  ignore(_args: Record<string, unknown>, context: LocalToolContext): Promise<string> {
    ignoreSignals.push(context.signal);
    return release.promise;
  }

  @Tool({ identifier: 'stuck', apiName: 'own', description: 'has its own deadline', parameters: { type: 'object', properties: {} }, timeoutMs: 150 })
  own(_args: Record<string, unknown>, context: LocalToolContext): Promise<string> {
    return new Promise((_resolve, reject) => context.signal.addEventListener('abort', () => reject(new Error('aborted'))));
  }
}

/** `retried/lookup` throws on its first two attempts; the keys it was handed, in order. */
const lookupKeys: string[] = [];

@Injectable()
class RetriedTools {
  @Tool({ identifier: 'retried', apiName: 'lookup', description: 'fails twice', parameters: { type: 'object', properties: {} }, idempotent: true, retry: { attempts: 3, initialDelayMs: 1 } })
  lookup(_args: Record<string, unknown>, context: LocalToolContext): string {
    lookupKeys.push(context.idempotencyKey);
    if (lookupKeys.length < 3) throw new Error('the index is rebuilding');
    return 'found';
  }
}

guardUnhandledRejections();

const databases = await appDatabases('f3-deadlines');
let server: KeyedMcpServer;
let app: RuntimeApp;
let registry: Registry;
let metrics: ToolMetrics;

beforeAll(async () => {
  server = await startKeyedMcpServer({ failures: 2 });
}, 30_000);

afterAll(async () => {
  await server?.close();
});

function toolErrors(operationId: string): { agent: OnToolCallErrorEvent[]; engine: ToolCallContext[] } {
  const of = (point: string) => app.events.filter((e: DispatchedEvent) => e.point === point && e.operationId === operationId).map((e) => e.payload);
  return { agent: of('onToolCallError') as OnToolCallErrorEvent[], engine: of('on_tool_error') as ToolCallContext[] };
}

async function toolMessage(operationId: string) {
  return (await app.store.messages(operationId)).find((m) => m.role === 'tool')!;
}

async function lateResults(): Promise<number> {
  const line = (await registry.metrics()).split('\n').find((l) => l.startsWith('agent_hooks_tool_late_results_total{source="local"}'));
  return line ? Number(line.split(' ')[1]) : 0;
}

databases.describeEach('F3 on %s', (driver: DriverName) => {
  beforeAll(async () => {
    release = deferred<string>();
    app = await bootRuntime({ observe: true, config: config(server.url), providers: [StuckTools, RetriedTools], database: databases.databaseFor(driver, 'f3') });
    registry = new Registry();
    metrics = new ToolMetrics(app.moduleRef.get(LateToolResults), registry);
    metrics.onModuleInit();
  }, 30_000);

  afterAll(async () => {
    metrics?.onModuleDestroy();
    await app?.close();
  });

  describe('F3 deadlines', () => {
    it.each([
      ['a per-tool override wins over its server and the agent', 'mcpOverride'],
      ["the server's timeoutMs wins over the agent's", 'mcpServer'],
    ])('F3: a hung MCP tool — %s: the request is aborted and a timeout error published', async (_what, agentId) => {
      const started = Date.now();
      const result = await within(app.runtime.run('go', { agentId }), 'the run', 15_000);
      expect(Date.now() - started).toBeLessThan(LONG);
      expect(result.reason).toBe('done');
      const tool = await toolMessage(result.operationId);
      expect(tool).toMatchObject({ success: false, state: { error: { type: 'timeout' } } });
      expect(tool.content).toMatch(/timed out after 250 ms/);
      const { agent, engine } = toolErrors(result.operationId);
      expect(agent).toEqual([expect.objectContaining({ error: expect.objectContaining({ type: 'timeout' }), willRetry: false })]);
      expect(engine.map((e) => e.error)).toEqual([{ type: 'timeout' }]);
      // The server saw the call cancelled (its signal fired): the abort reached it, keyed.
      await eventually(() => server.hangAborted.includes(agent[0]!.idempotencyKey!), 'the server sees the cancellation');
    });

    it("F3: a local tool's own timeoutMs wins over the agent's", async () => {
      const result = await within(app.runtime.run('go', { agentId: 'localOwnDeadline' }), 'the run', 15_000);
      expect(await toolMessage(result.operationId)).toMatchObject({ success: false, state: { error: { type: 'timeout' } } });
      expect((await toolMessage(result.operationId)).content).toMatch(/timed out after 150 ms/);
    });

    it("F3: a hung local tool that ignores its signal: the agent's deadline aborts it; its late result is discarded, counted, and never replaces the timeout", async () => {
      const before = await lateResults();
      const result = await within(app.runtime.run('go', { agentId: 'localAgentDeadline' }), 'the run', 15_000);
      expect(ignoreSignals.at(-1)!.aborted).toBe(true);
      const published = await toolMessage(result.operationId);
      expect(published).toMatchObject({ success: false, state: { error: { type: 'timeout' } } });
      expect(published.content).toMatch(/timed out after 200 ms/);
      expect(result.content).toBe(`saw: ${published.content}`);

      release.resolve('a late answer');
      await eventually(async () => (await lateResults()) === before + 1, 'the late result is counted');
      const messages = await app.store.messages(result.operationId);
      expect(messages.filter((m) => m.role === 'tool')).toEqual([published]);
      expect(JSON.stringify(messages)).not.toContain('a late answer');
    });
  });

  describe('F3 retries', () => {
    it('F3: an idempotent MCP tool with retry: the server counts 3 attempts with one key; two failed attempts reported with willRetry', async () => {
      const before = server.calls.length;
      const result = await within(app.runtime.run('go', { agentId: 'retrier' }), 'the run', 15_000);
      expect(result).toMatchObject({ reason: 'done', content: 'saw: flaky: ok' });
      const attempts = server.calls.slice(before);
      expect(attempts).toHaveLength(3);
      const key = attempts[0]!.metaKey;
      expect(key).toMatch(/^nah_/);
      for (const attempt of attempts) expect(attempt).toEqual({ tool: 'flaky', metaKey: key, headerKey: key });
      const { agent, engine } = toolErrors(result.operationId);
      expect(agent.map((e) => [e.attempt, e.willRetry, e.idempotencyKey])).toEqual([
        [1, true, key],
        [2, true, key],
      ]);
      expect(new Set(agent.map((e) => e.id)).size).toBe(2);
      expect(engine.map((e) => e.willRetry)).toEqual([true, true]);
      expect(await toolMessage(result.operationId)).toMatchObject({ success: true, content: 'flaky: ok' });
    });

    it('F3: a per-tool retry override whose attempts run out: each failure reported, the last with willRetry false; the error published', async () => {
      const before = server.calls.length;
      const result = await within(app.runtime.run('go', { agentId: 'retryOnce' }), 'the run', 15_000);
      expect(server.calls.length - before).toBe(2);
      const { agent, engine } = toolErrors(result.operationId);
      expect(agent.map((e) => [e.attempt, e.willRetry])).toEqual([
        [1, true],
        [2, false],
      ]);
      expect(engine.map((e) => e.willRetry)).toEqual([true, false]);
      expect(await toolMessage(result.operationId)).toMatchObject({ success: false });
    });

    it('F3: an idempotent @Tool with retry runs again with the same key in its context', async () => {
      lookupKeys.length = 0;
      const result = await within(app.runtime.run('go', { agentId: 'localRetrier' }), 'the run', 15_000);
      expect(result.content).toBe('saw: found');
      expect(lookupKeys).toHaveLength(3);
      expect(new Set(lookupKeys).size).toBe(1);
      expect(toolErrors(result.operationId).agent.map((e) => [e.attempt, e.willRetry, e.idempotencyKey])).toEqual([
        [1, true, lookupKeys[0]],
        [2, true, lookupKeys[0]],
      ]);
    });

    it('F3: without retry a failing tool is called once', async () => {
      const before = server.calls.length;
      const result = await within(app.runtime.run('go', { agentId: 'noRetry' }), 'the run', 15_000);
      expect(server.calls.length - before).toBe(1);
      expect(toolErrors(result.operationId).agent.map((e) => e.willRetry)).toEqual([false]);
    });

    it('F3: a cancel during a backoff ends it at once: no further attempt, the operation is interrupted', async () => {
      const before = server.calls.length;
      const firstFailure = deferred();
      const { operationId, done } = await app.runtime.execAgent({
        agentId: 'backoff',
        prompt: 'go',
        hooks: [{ id: 'retry-watch', type: 'onToolCallError', handler: (event) => void (event.willRetry ? firstFailure.resolve() : undefined) }],
      });
      await within(firstFailure.promise, 'the first failed attempt');
      const cancelled = Date.now();
      await app.runtime.cancel(operationId);
      expect(await within(done, 'the cancelled operation ends', 5_000)).toMatchObject({ reason: 'interrupted' });
      expect(Date.now() - cancelled).toBeLessThan(5_000);
      expect(server.calls.length - before).toBe(1);
    });
  });
});
