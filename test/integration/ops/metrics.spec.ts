/**
 * Issue 7 /metrics: the ops module's Prometheus registry, fed by `HookDispatcher.outcomes$` and the
 * database: invocations by point/source/outcome, latency by point, webhook errors by code, operations by
 * status — one registry per app, and labels from closed sets only (S1: no hook id, tool args, payload).
 */
import { createServer } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Module, type DynamicModule, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import type { Registry } from 'prom-client';
import { AgentHooksModule, HookDispatcher } from '../../../src/index.js';
import { AgentRuntime } from '../../../src/runtime/agent-runtime.js';
import { OperationStart } from '../../../src/runtime/operation-start.js';
import { ClockTools } from '../../../src/server/clock.tools.js';
import { HookMetrics } from '../../../src/server/ops/hook-metrics.js';
import { METRICS_REGISTRY } from '../../../src/server/ops/metrics-registry.js';
import { OpsModule } from '../../../src/server/ops/ops.module.js';
import { eventually } from '../../support/eventually.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

const CONFIG = scriptedConfig({
  system: 'metrics',
  models: {
    clock: [toolCalls(call('clock/now')), answer('It is {{lastToolResult}}.')],
  },
  agents: {
    assistant: { model: 'clock', tools: ['clock/now'] },
    approver: { model: 'clock', tools: ['clock/now'], approval: ['^clock/'] },
    capped: { model: 'clock', tools: ['clock/now'], limits: { maxToolCalls: 0 } },
  },
});

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'agent-hooks-metrics-'));
  writeFileSync(join(dir, 'agents.yaml'), CONFIG);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function boot(name: string): Promise<INestApplicationContext> {
  const agentHooks = AgentHooksModule.forRoot({
    database: `sqlite:${join(dir, `${name}.sqlite`)}`,
    configFile: join(dir, 'agents.yaml'),
    webhooks: { allowNetworks: ['127.0.0.0/8'] },
  });
  @Module({})
  class MetricsTestModule {
    static forRoot(): DynamicModule {
      return { module: MetricsTestModule, imports: [EventEmitterModule.forRoot(), agentHooks, OpsModule.forRoot(agentHooks)], providers: [ClockTools] };
    }
  }
  return NestFactory.createApplicationContext(MetricsTestModule.forRoot(), { logger: ['error'], abortOnError: false });
}

/** A loopback port nothing listens on: a webhook there fails with a network error. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** `name{labels} value` lines of one metric, as a map from the label text to the value. */
async function samples(registry: Registry, name: string): Promise<Map<string, number>> {
  const text = await registry.metrics();
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`).exec(line);
    if (match) found.set(match[1] ?? '', Number(match[2]));
  }
  return found;
}

describe('/metrics registry', () => {
  let app: INestApplicationContext;

  beforeAll(async () => {
    app = await boot('metrics');
  });

  afterAll(async () => {
    await app.close();
  });

  it('one AgentHooksModule instance: the metrics subscribe to the dispatcher the runtime uses', () => {
    const dispatcherOf = (instance: object) => (instance as { dispatcher: HookDispatcher }).dispatcher;
    expect(dispatcherOf(app.get(HookMetrics))).toBe(dispatcherOf(app.get(OperationStart)));
  });

  it('counts invocations by point, source and outcome, observes latency by point, and webhook errors by code', async () => {
    const registry = app.get<Registry>(METRICS_REGISTRY);
    const runtime = app.get(AgentRuntime);
    const port = await closedPort();
    const { done } = await runtime.execAgent({
      agentId: 'assistant',
      prompt: 'prompt-text-never-a-label',
      hooks: [
        { id: 'caller-policy-with-a-unique-id-7f3a', type: 'beforeToolCall', handler: () => ({ decision: 'allow' as const }), onError: 'block' },
        { id: 'caller-observer', type: 'afterStep', handler: () => undefined },
        { id: 'caller-webhook', type: 'afterToolCall', webhook: { url: `http://127.0.0.1:${port}/hook`, timeout: 2 } },
      ],
    });
    expect((await done).reason).toBe('done');

    const invocations = await samples(registry, 'agent_hooks_hook_invocations_total');
    expect(invocations.get('{point="beforeToolCall",source="caller",outcome="allowed"}')).toBe(1);
    expect(invocations.get('{point="afterStep",source="caller",outcome="ok"}')).toBe(2);
    expect(invocations.get('{point="afterToolCall",source="caller",outcome="error"}')).toBe(1);

    const latencyCounts = await samples(registry, 'agent_hooks_hook_latency_seconds_count');
    expect(latencyCounts.get('{point="beforeToolCall"}')).toBe(1);
    expect(latencyCounts.get('{point="afterStep"}')).toBe(2);

    const webhookErrors = await samples(registry, 'agent_hooks_webhook_errors_total');
    expect([...webhookErrors.entries()]).toEqual([['{point="afterToolCall",code="network_error"}', 1]]);

    // S1: labels are closed sets — no hook id, no prompt, no tool name, no URL.
    const text = await registry.metrics();
    for (const leaked of ['caller-policy-with-a-unique-id-7f3a', 'caller-webhook', 'prompt-text-never-a-label', `:${port}`, 'clock/now']) expect(text).not.toContain(leaked);
  });

  it('operations by status and completed ones by reason are read from the database at scrape time', async () => {
    const registry = app.get<Registry>(METRICS_REGISTRY);
    const runtime = app.get(AgentRuntime);
    const before = await samples(registry, 'agent_hooks_operations');
    await runtime.execAgent({ agentId: 'approver', prompt: 'What time is it?' });
    // The approval pause is persisted by the step; wait until the database shows it.
    await eventually(
      async () => (await samples(registry, 'agent_hooks_operations')).get('{status="waiting"}') === (before.get('{status="waiting"}') ?? 0) + 1,
      'the gauge to count the waiting operation',
    );
    const after = await samples(registry, 'agent_hooks_operations');
    expect(after.get('{status="waiting"}')).toBe((before.get('{status="waiting"}') ?? 0) + 1);
    expect(after.get('{status="completed"}')).toBe(before.get('{status="completed"}'));
    expect(after.get('{status="running"}')).toBe(0);
    expect((await samples(registry, 'agent_hooks_operations_completed')).get('{reason="done"}')).toBe(before.get('{status="completed"}'));
  });

  it('F4: operations ended by a budget are counted by reason and by the limit reached', async () => {
    const registry = app.get<Registry>(METRICS_REGISTRY);
    const runtime = app.get(AgentRuntime);
    expect((await (await runtime.execAgent({ agentId: 'capped', prompt: 'What time is it?' })).done).reason).toBe('tool_limit');
    expect((await samples(registry, 'agent_hooks_operations_completed')).get('{reason="tool_limit"}')).toBe(1);
    expect([...(await samples(registry, 'agent_hooks_operations_limited')).entries()]).toEqual([['{limit="maxToolCalls"}', 1]]);
  });

  it('one registry per app: a second app starts from zero and does not touch the first', async () => {
    const other = await boot('other');
    try {
      const first = app.get<Registry>(METRICS_REGISTRY);
      const second = other.get<Registry>(METRICS_REGISTRY);
      expect(second).not.toBe(first);
      const before = await samples(first, 'agent_hooks_hook_invocations_total');
      await (await other.get(AgentRuntime).execAgent({ agentId: 'assistant', prompt: 'hi', hooks: [{ id: 'x', type: 'afterStep', handler: () => undefined }] })).done;
      expect((await samples(second, 'agent_hooks_hook_invocations_total')).get('{point="afterStep",source="caller",outcome="ok"}')).toBe(2);
      expect(await samples(first, 'agent_hooks_hook_invocations_total')).toEqual(before);
      // Process metrics are on the app's registry too (not prom-client's global one).
      expect(await second.metrics()).toContain('process_cpu_user_seconds_total');
    } finally {
      await other.close();
    }
  });
});
