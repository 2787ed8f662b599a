// Hook and tracing overhead on a real run: a 10-step scripted run (one local tool per step) on SQLite,
// same process, medians of alternating rounds:
// - hooks: a no-op hook on every point the run fires (both families) vs none (goal ≤ 1.2);
// - tracing, no SDK (SPEC O5): `@opentelemetry/api` loaded, no SDK registered vs tracing off (the API
//   absent, as without the optional peer) — goal ≤ 1.02;
// - tracing with an SDK: a tracer provider with a BatchSpanProcessor and the in-memory exporter vs tracing
//   off — goal ≤ 1.15.
//   npm run bench:runtime   → last line `RESULT runtime hooks-overhead=<r> tracing-no-sdk=<r> tracing-sdk=<r>`
//   (ratios of CPU time per run, medians of alternating rounds; wall-clock ratios are printed above it)
import 'reflect-metadata';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { AgentHooksModule, AgentRuntime, HOOK_POINT_NAMES, OnHook, Tool } from '../dist/index.js';
import { OPEN_TELEMETRY } from '../dist/tracing/open-telemetry.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const dir = mkdtempSync(join(tmpdir(), 'agent-hooks-bench-'));
const step = '      - toolCalls: [ { identifier: bench, apiName: work, args: { n: 1 } } ]\n';
writeFileSync(
  join(dir, 'agents.yaml'),
  `system: bench\nmodels:\n  ten:\n    provider: scripted\n    costPerTokenUsd: 0\n    script:\n${step.repeat(9)}      - content: "done"\nagents:\n  bench: { model: ten, tools: [ "bench/*" ], limits: { maxSteps: 20 } }\n`,
);

function decorate(cls, name, decorator) {
  decorator(cls.prototype, name, Object.getOwnPropertyDescriptor(cls.prototype, name));
}

class BenchTools {
  work() {
    return 'ok';
  }
}
decorate(BenchTools, 'work', Tool({ identifier: 'bench', apiName: 'work', description: 'no-op', parameters: { type: 'object', properties: { n: { type: 'number' } } } }));
Injectable()(BenchTools);

// A no-op hook on every point; transform points must hand their payload back.
let hookCalls = 0;
class NoopHooks {}
for (const point of HOOK_POINT_NAMES) {
  const name = `on_${point}`;
  const returnsPayload = ['on_run_start', 'before_mcp_request', 'transform_tool_result'].includes(point);
  NoopHooks.prototype[name] = (arg) => {
    hookCalls++;
    return returnsPayload ? arg.payload : undefined;
  };
  decorate(NoopHooks, name, OnHook(point));
}
Injectable()(NoopHooks);

async function appWith(hooks, file) {
  class BenchModule {}
  Module({
    imports: [AgentHooksModule.forRoot({ database: `sqlite:${join(dir, file)}`, configFile: join(dir, 'agents.yaml') })],
    providers: hooks ? [BenchTools, NoopHooks] : [BenchTools],
  })(BenchModule);
  const app = await NestFactory.createApplicationContext(BenchModule, { logger: false });
  await app.init();
  return app;
}

/** The same app with tracing off: the optional `@opentelemetry/api` treated as absent. */
async function untracedApp(file) {
  const moduleRef = await Test.createTestingModule({
    imports: [AgentHooksModule.forRoot({ database: `sqlite:${join(dir, file)}`, configFile: join(dir, 'agents.yaml') })],
    providers: [BenchTools],
  })
    .overrideProvider(OPEN_TELEMETRY)
    .useValue(null)
    .compile();
  moduleRef.useLogger(false);
  await moduleRef.init();
  return moduleRef;
}

const bare = await appWith(false, 'bare.sqlite');
const hooked = await appWith(true, 'hooked.sqlite');
const runtimes = { bare: bare.get(AgentRuntime), hooked: hooked.get(AgentRuntime) };

/** Mean wall and CPU (this process: user + system) milliseconds per run. */
async function timeRuns(runtime) {
  const started = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < RUNS; i++) {
    const result = await runtime.run('go', { agentId: 'bench' });
    if (result.content !== 'done') throw new Error('unexpected answer');
  }
  const used = process.cpuUsage(cpu);
  return { wall: (performance.now() - started) / RUNS, cpu: (used.user + used.system) / 1000 / RUNS };
}

await timeRuns(runtimes.bare);
hookCalls = 0;
await timeRuns(runtimes.hooked);
const callsPerRun = hookCalls / RUNS;
if (callsPerRun < 50) throw new Error(`expected the hooks to fire on every point, saw ${callsPerRun} calls per run`);
const bareMs = [];
const hookedMs = [];
for (let round = 0; round < ROUNDS; round++) {
  if (round % 2 === 0) {
    bareMs.push(await timeRuns(runtimes.bare));
    hookedMs.push(await timeRuns(runtimes.hooked));
  } else {
    hookedMs.push(await timeRuns(runtimes.hooked));
    bareMs.push(await timeRuns(runtimes.bare));
  }
}
const middle = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
/** Medians of wall and CPU time over rounds. */
const median = (v) => ({ wall: middle(v.map((r) => r.wall)), cpu: middle(v.map((r) => r.cpu)) });

/** Alternating rounds of two runtimes: the medians of each. */
async function compare(first, second) {
  const a = [];
  const z = [];
  await timeRuns(first);
  await timeRuns(second);
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      a.push(await timeRuns(first));
      z.push(await timeRuns(second));
    } else {
      z.push(await timeRuns(second));
      a.push(await timeRuns(first));
    }
  }
  return [median(a), median(z)];
}

// Tracing off vs the API with no SDK (the bare app above is the latter: the API is installed here).
const off = await untracedApp('off.sqlite');
const offRuntime = off.get(AgentRuntime);
const [offMs, noSdkMs] = await compare(offRuntime, runtimes.bare);

// Then an SDK, registered globally as a host would: every app's spans are recorded from now on.
const exporter = new InMemorySpanExporter();
// A queue large enough that no span is dropped between exports: every span is paid for.
const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: 100_000, maxExportBatchSize: 2_048 })] });
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(provider);
const [offMs2, sdkMs] = await compare(offRuntime, runtimes.bare);
await provider.forceFlush();
const spansPerRun = exporter.getFinishedSpans().length / ((ROUNDS + 1) * RUNS);
if (spansPerRun < 10) throw new Error(`expected spans with the SDK registered, saw ${spansPerRun} per run`);
await provider.shutdown();

await bare.close();
await hooked.close();
await off.close();
rmSync(dir, { recursive: true, force: true });
const b = median(bareMs);
const h = median(hookedMs);
const ms = (r) => `${r.wall.toFixed(1)} ms (CPU ${r.cpu.toFixed(1)} ms)`;
console.log(`10-step run: no hooks ${ms(b)}   a no-op hook on every point (${callsPerRun} hook calls per run) ${ms(h)}`);
console.log(`tracing: off ${ms(offMs)}   API without an SDK ${ms(noSdkMs)}   |   off ${ms(offMs2)}   SDK + BatchSpanProcessor + in-memory exporter (${spansPerRun.toFixed(0)} spans per run) ${ms(sdkMs)}`);
console.log(`wall-clock ratios (noisy on a shared machine): hooks ${(h.wall / b.wall).toFixed(2)}, tracing no SDK ${(noSdkMs.wall / offMs.wall).toFixed(2)}, SDK ${(sdkMs.wall / offMs2.wall).toFixed(2)}`);
// The RESULT ratios are of CPU time per run: what the work costs, less sensitive to other processes' load.
console.log(`RESULT runtime hooks-overhead=${(h.cpu / b.cpu).toFixed(2)} tracing-no-sdk=${(noSdkMs.cpu / offMs.cpu).toFixed(2)} tracing-sdk=${(sdkMs.cpu / offMs2.cpu).toFixed(2)}`);
