// Hook and tracing overhead on a real run: a 10-step scripted run (one local tool per step) on SQLite.
// - hooks: a no-op hook on every point the run fires (both families) vs none (goal ≤ 1.2);
// - model hooks: one no-op hook on each model-call point a step fires (beforeModelCall, afterModelCall,
//   before_model_request, after_model_response: SPEC K1) vs none;
// - tracing, no SDK (SPEC O5): `@opentelemetry/api` loaded, no SDK registered vs tracing off (the API
//   absent, as without the optional peer) — goal ≤ 1.02;
// - tracing with an SDK: a tracer provider with a BatchSpanProcessor and the in-memory exporter vs tracing
//   off — goal ≤ 1.15. It includes the host's AsyncLocalStorage context manager: on Node 20 a hook on each
//   of the run's ~1,400 promises, 3–6% of this run with no span at all (measured on 2026-12-01).
//   npm run bench:runtime   → last line `RESULT runtime hooks-overhead=<r> tracing-no-sdk=<r> tracing-sdk=<r> model-hooks-overhead=<r>`
//
// How it is measured, so that two runs on a shared machine agree within a few percent:
// - each variant (off, no SDK, SDK, hooks) runs in child processes of its own (BENCH_PROCESSES, each with
//   its own fresh SQLite file): an SDK is a process-wide global (a tracer once resolved keeps its
//   delegate), one variant's heap, JIT state and GC debt never land on another, every database grows at
//   the same pace, and a process's own luck (JIT decisions, heap layout: up to ±4% between identical
//   processes, more than the noise of many rounds) is averaged over four of them;
// - a round is BENCH_RUNS runs in every process, run by run, one process at a time, in an order that
//   rotates per run and round (no variant is always first or last): the variants of a round share the
//   same moments of load from other processes. BENCH_WARMUP rounds are discarded (JIT, caches);
// - every round starts after a full GC, and ends with a flush of the SDK variant's batch processor, so its
//   export is paid inside the round; the in-memory exporter is reset after each round (spans kept across
//   rounds would be heap growth, a GC cost of the bench, not of tracing);
// - a ratio is taken per round (its variants interleaved, under the same load), and the RESULT is the
//   median of the per-round ratios of CPU time (each child's user + system), with their interquartile
//   range and min–max printed above it.
import 'reflect-metadata';
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 24);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 4);
const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 4);
const VARIANTS = ['off', 'noSdk', 'sdk', 'hooks', 'modelHooks'];
/** The model-call points a step fires (`onModelCallError` only on a failure). */
const MODEL_POINTS = ['before_model_request', 'beforeModelCall', 'after_model_response', 'afterModelCall'];

if (process.env.BENCH_VARIANT) await variant(process.env.BENCH_VARIANT, process.env.BENCH_DIR, process.env.BENCH_COPY);
else await main();

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'agent-hooks-bench-'));
  const step = '      - toolCalls: [ { identifier: bench, apiName: work, args: { n: 1 } } ]\n';
  writeFileSync(
    join(dir, 'agents.yaml'),
    `system: bench\nmodels:\n  ten:\n    provider: scripted\n    costPerTokenUsd: 0\n    script:\n${step.repeat(9)}      - content: "done"\nagents:\n  bench: { model: ten, tools: [ "bench/*" ], limits: { maxSteps: 20 } }\n`,
  );
  const children = [];
  try {
    const starting = [];
    for (let copy = 0; copy < PROCESSES; copy++) for (const name of VARIANTS) starting.push(spawnVariant(name, dir, copy).then((child) => ({ name, ...child })));
    children.push(...(await Promise.all(starting)));
    /** rounds[variant][round] = { wall, cpu }: ms per run, mean over the variant's processes. */
    const rounds = Object.fromEntries(VARIANTS.map((v) => [v, []]));
    const seen = { spans: 0, sdkRuns: 0, hookCalls: 0, hookRuns: 0, modelHookCalls: 0, modelHookRuns: 0 };
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      const sums = Object.fromEntries(VARIANTS.map((v) => [v, { wall: 0, cpu: 0 }]));
      await Promise.all(children.map((child) => child.ask({ startRound: true })));
      // Run by run, every process in turn (the order rotating per round): the variants of a round share the
      // same moments of load from other processes, as closely as one process at a time allows.
      for (let run = 0; run < RUNS; run++) {
        for (let i = 0; i < children.length; i++) {
          const child = children[(i + run + round) % children.length];
          const one = await child.ask({ run: true });
          sums[child.name].wall += one.wall / PROCESSES / RUNS;
          sums[child.name].cpu += one.cpu / PROCESSES / RUNS;
        }
      }
      for (const child of children) {
        const end = await child.ask({ endRound: true });
        sums[child.name].cpu += end.cpu / PROCESSES / RUNS;
        if (round < WARMUP) continue;
        if (child.name === 'sdk') {
          seen.spans += end.spans;
          seen.sdkRuns += RUNS;
        }
        if (child.name === 'hooks') {
          seen.hookCalls += end.hookCalls;
          seen.hookRuns += RUNS;
        }
        if (child.name === 'modelHooks') {
          seen.modelHookCalls += end.hookCalls;
          seen.modelHookRuns += RUNS;
        }
      }
      if (round >= WARMUP) for (const v of VARIANTS) rounds[v].push(sums[v]);
    }
    const spansPerRun = seen.spans / seen.sdkRuns;
    const callsPerRun = seen.hookCalls / seen.hookRuns;
    if (spansPerRun < 10) throw new Error(`expected spans with the SDK registered, saw ${spansPerRun} per run`);
    if (callsPerRun < 50) throw new Error(`expected the hooks to fire on every point, saw ${callsPerRun} calls per run`);
    const modelCallsPerRun = seen.modelHookCalls / seen.modelHookRuns;
    if (modelCallsPerRun !== 10 * MODEL_POINTS.length) throw new Error(`expected ${10 * MODEL_POINTS.length} model hook calls per run, saw ${modelCallsPerRun}`);

    const ratios = (name, base, key) => rounds[name].map((r, round) => r[key] / rounds[base][round][key]);
    const pairs = { hooks: ['hooks', 'noSdk'], noSdk: ['noSdk', 'off'], sdk: ['sdk', 'off'], modelHooks: ['modelHooks', 'noSdk'] };
    const cpu = Object.fromEntries(Object.entries(pairs).map(([k, [v, b]]) => [k, stats(ratios(v, b, 'cpu'))]));
    const wall = Object.fromEntries(Object.entries(pairs).map(([k, [v, b]]) => [k, stats(ratios(v, b, 'wall'))]));
    const ms = (name) => {
      const b = rounds[name];
      return `${quantile(b.map((r) => r.wall), 0.5).toFixed(2)} ms (CPU ${quantile(b.map((r) => r.cpu), 0.5).toFixed(2)} ms)`;
    };
    const spread = (s) => `${s.median.toFixed(3)} (IQR ${s.q1.toFixed(3)}–${s.q3.toFixed(3)}, min–max ${s.min.toFixed(3)}–${s.max.toFixed(3)})`;
    console.log(`${ROUNDS} rounds × ${PROCESSES} processes × ${RUNS} runs per variant (${WARMUP} warm-up rounds discarded), one SQLite file per process, rotating order`);
    console.log(`10-step run, median per round: tracing off ${ms('off')}   API without an SDK ${ms('noSdk')}   SDK + BatchSpanProcessor + in-memory exporter (${spansPerRun.toFixed(0)} spans per run) ${ms('sdk')}   no-op hook on every point (${callsPerRun} hook calls per run, API without an SDK) ${ms('hooks')}   one no-op hook on each model-call point (${modelCallsPerRun} calls per run) ${ms('modelHooks')}`);
    // What a span costs in a real run, to read beside bench:tracing (the same spans, nothing else running).
    const medianCpu = (name) => quantile(rounds[name].map((r) => r.cpu), 0.5);
    console.log(`SDK: ${(((medianCpu('sdk') - medianCpu('off')) * 1000) / spansPerRun).toFixed(1)} µs of CPU per span in the run, the context manager included (SDK − off, per-run medians ÷ ${spansPerRun.toFixed(0)} spans)`);
    console.log(`per-round CPU ratios: hooks ${spread(cpu.hooks)}   tracing no SDK ${spread(cpu.noSdk)}   SDK ${spread(cpu.sdk)}   model hooks ${spread(cpu.modelHooks)}`);
    console.log(`per-round wall-clock ratios (noisy on a shared machine): hooks ${spread(wall.hooks)}   tracing no SDK ${spread(wall.noSdk)}   SDK ${spread(wall.sdk)}   model hooks ${spread(wall.modelHooks)}`);
    console.log(`RESULT runtime hooks-overhead=${cpu.hooks.median.toFixed(2)} tracing-no-sdk=${cpu.noSdk.median.toFixed(2)} tracing-sdk=${cpu.sdk.median.toFixed(2)} model-hooks-overhead=${cpu.modelHooks.median.toFixed(2)}`);
  } finally {
    await Promise.all(children.map((c) => c.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}

function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  return sorted[low] + (sorted[Math.min(low + 1, sorted.length - 1)] - sorted[low]) * (at - low);
}

function stats(values) {
  return { median: quantile(values, 0.5), q1: quantile(values, 0.25), q3: quantile(values, 0.75), min: Math.min(...values), max: Math.max(...values) };
}

/** A variant's child process, asked for one run (or a round's start or end) at a time. */
function spawnVariant(name, dir, copy) {
  const child = fork(fileURLToPath(import.meta.url), {
    env: { ...process.env, BENCH_VARIANT: name, BENCH_DIR: dir, BENCH_COPY: String(copy) },
    // --expose-gc: a full GC before each round; the parent's flags (e.g. --cpu-prof) reach the children.
    execArgv: [...process.execArgv, '--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let pending;
  child.on('message', (message) => {
    const settle = pending;
    pending = undefined;
    if (message.error) settle?.reject(new Error(`${name}: ${message.error}`));
    else settle?.resolve(message);
  });
  child.on('exit', (code) => pending?.reject(new Error(`${name} exited (${code})`)));
  const ask = (request) =>
    new Promise((resolve, reject) => {
      pending = { resolve, reject };
      child.send(request);
    });
  const close = () =>
    child.exitCode !== null
      ? Promise.resolve()
      : new Promise((resolve) => {
          child.once('exit', () => resolve());
          child.send({ close: true });
        });
  return ask({ ready: true }).then(() => ({ ask, close }));
}

/** One variant: its app on its own SQLite file, timing one run at a time when the parent asks. */
async function variant(name, dir, copy) {
  const { Injectable } = await import('@nestjs/common');
  const { Test } = await import('@nestjs/testing');
  const { AgentHooksModule, AgentRuntime, HOOK_POINT_NAMES, OnHook, Tool } = await import('../dist/index.js');
  const { OPEN_TELEMETRY } = await import('../dist/tracing/open-telemetry.js');

  const decorate = (cls, method, decorator) => decorator(cls.prototype, method, Object.getOwnPropertyDescriptor(cls.prototype, method));
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
    const method = `on_${point}`;
    const returnsPayload = ['on_run_start', 'before_mcp_request', 'transform_tool_result'].includes(point);
    NoopHooks.prototype[method] = (arg) => {
      hookCalls++;
      return returnsPayload ? arg.payload : undefined;
    };
    decorate(NoopHooks, method, OnHook(point));
  }
  Injectable()(NoopHooks);

  // One no-op hook on each model-call point (the modelHooks variant).
  class NoopModelHooks {}
  for (const point of MODEL_POINTS) {
    NoopModelHooks.prototype[point] = () => {
      hookCalls++;
    };
    decorate(NoopModelHooks, point, OnHook(point));
  }
  Injectable()(NoopModelHooks);

  // The SDK as a host registers it, before the app starts: every span of this process is recorded.
  let sdk;
  if (name === 'sdk') {
    const { context, trace } = await import('@opentelemetry/api');
    const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
    const { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } = await import('@opentelemetry/sdk-trace-base');
    const exporter = new InMemorySpanExporter();
    // A queue large enough that no span is dropped between exports: every span is paid for.
    const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: 100_000, maxExportBatchSize: 2_048 })] });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(provider);
    sdk = { exporter, provider };
  }

  let builder = Test.createTestingModule({
    imports: [AgentHooksModule.forRoot({ database: `sqlite:${join(dir, `${name}-${copy}.sqlite`)}`, configFile: join(dir, 'agents.yaml') })],
    providers: name === 'hooks' ? [BenchTools, NoopHooks] : name === 'modelHooks' ? [BenchTools, NoopModelHooks] : [BenchTools],
  });
  // Tracing off: the optional `@opentelemetry/api` treated as absent.
  if (name === 'off') builder = builder.overrideProvider(OPEN_TELEMETRY).useValue(null);
  const app = await builder.compile();
  app.useLogger(false);
  await app.init();
  const runtime = app.get(AgentRuntime);

  const cpuMs = (since) => {
    const used = process.cpuUsage(since);
    return (used.user + used.system) / 1000;
  };

  /** Before a round, outside the measurement: a full GC, and time for its concurrent sweeping to end. */
  async function startRound() {
    globalThis.gc();
    await new Promise((resolve) => setTimeout(resolve, 25));
    hookCalls = 0;
  }

  /** One run: wall and CPU milliseconds, up to the turn after it resolved (work it chained on is its own). */
  async function oneRun() {
    const started = performance.now();
    const cpu = process.cpuUsage();
    const result = await runtime.run('go', { agentId: 'bench' });
    await new Promise((resolve) => setImmediate(resolve));
    if (result.content !== 'done') throw new Error('unexpected answer');
    return { wall: performance.now() - started, cpu: cpuMs(cpu) };
  }

  /** After a round: the SDK's batch exported (its CPU is the round's too), then the exporter emptied. */
  async function endRound() {
    const cpu = process.cpuUsage();
    await sdk?.provider.forceFlush();
    const spans = sdk ? sdk.exporter.getFinishedSpans().length : 0;
    sdk?.exporter.reset();
    return { cpu: cpuMs(cpu), spans, hookCalls };
  }

  // The parent gone (a failure, ^C): nothing left to measure for.
  process.on('disconnect', () => process.exit(0));
  process.on('message', async (request) => {
    try {
      if (request.close) {
        await sdk?.provider.shutdown();
        await app.close();
        process.exit(0);
      }
      if (request.ready) process.send({ ready: true });
      else if (request.startRound) process.send({ started: await startRound() });
      else if (request.run) process.send(await oneRun());
      else process.send(await endRound());
    } catch (error) {
      process.send({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    }
  });
}
