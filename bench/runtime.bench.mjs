// Hook overhead on a real run: a 10-step scripted run (one local tool per step) on SQLite, with a no-op
// hook on every point the run fires (both families) vs the same run with none, same process.
//   npm run bench:runtime   → last line `RESULT runtime hooks-overhead=<ratio>` (with/without; goal ≤ 1.2)
import 'reflect-metadata';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AgentHooksModule, AgentRuntime, HOOK_POINT_NAMES, OnHook, Tool } from '../dist/index.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
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

const bare = await appWith(false, 'bare.sqlite');
const hooked = await appWith(true, 'hooked.sqlite');
const runtimes = { bare: bare.get(AgentRuntime), hooked: hooked.get(AgentRuntime) };

async function timeRuns(runtime) {
  const started = performance.now();
  for (let i = 0; i < RUNS; i++) {
    const result = await runtime.run('go', { agentId: 'bench' });
    if (result.content !== 'done') throw new Error('unexpected answer');
  }
  return (performance.now() - started) / RUNS;
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
await bare.close();
await hooked.close();
rmSync(dir, { recursive: true, force: true });
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const b = median(bareMs);
const h = median(hookedMs);
console.log(`10-step run: no hooks ${b.toFixed(1)} ms   a no-op hook on every point (${callsPerRun} hook calls per run) ${h.toFixed(1)} ms`);
console.log(`RESULT runtime hooks-overhead=${(h / b).toFixed(2)}`);
