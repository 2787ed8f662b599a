// Queue mode scaling: scripted operations (two clock steps and an answer) per second through BullMQ step
// jobs with 1, 2 and 3 worker processes, one API process (this one, no worker), same PostgreSQL and Redis.
// CPU per step is the workers' CPU time (`process.cpuUsage`, user + system, asked over IPC) from the first
// execAgent to the last result, over the steps run (3 per operation); the API process's share is printed apart.
//   node bench/queue-scaling.bench.mjs
//   → `RESULT queue-scaling w1=<ops/s> w2=<ops/s> w3=<ops/s> w3/w1=<ratio> cpu-ms-per-step=<worker CPU at w1>`
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import pg from 'pg';
import { AgentHooksModule, AgentRuntime } from '../dist/index.js';

const OPS = Number(process.env.BENCH_OPS ?? 150);
/** The script below: two clock steps and an answer. */
const STEPS_PER_OPERATION = 3;
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'agent-hooks-queue-bench-'));
const configFile = join(dir, 'agents.yaml');
writeFileSync(
  configFile,
  `system: queue-bench
models:
  plain:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: clock, apiName: now, args: {} } ]
      - toolCalls: [ { identifier: clock, apiName: now, args: {} } ]
      - content: "It is {{lastToolResult}}."
agents:
  plain: { model: plain, tools: [ "clock/*" ] }
`,
);

async function withSchema(work) {
  const schema = `agent_hooks_bench_${Date.now().toString(36)}`;
  const url = new URL(DATABASE_URL);
  url.searchParams.set('schema', schema);
  try {
    return await work(url.toString());
  } finally {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
}

function startWorker(settings) {
  const child = spawn(process.execPath, [join(here, 'queue-worker.mjs'), JSON.stringify(settings)], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('worker ready')) resolve(child);
    });
    child.once('exit', () => reject(new Error(`worker exited: ${out}`)));
  });
}

/** A worker's CPU time so far, in microseconds (user + system). */
function cpuOf(child) {
  return new Promise((resolve, reject) => {
    child.once('message', (message) => resolve(message.cpu.user + message.cpu.system));
    child.once('exit', () => reject(new Error('worker exited before reporting its CPU time')));
    child.send('cpu');
  });
}

async function measure(workers) {
  return withSchema(async (database) => {
    const prefix = `ahbench-${workers}-${Date.now().toString(36)}`;
    const queue = { prefix, worker: false, concurrency: 8 };
    class ApiModule {}
    Module({ imports: [AgentHooksModule.forRoot({ database, configFile, mode: 'queue', redis: REDIS_URL, queue })] })(ApiModule);
    const api = await NestFactory.createApplicationContext(ApiModule, { logger: false });
    await api.init();
    const runtime = api.get(AgentRuntime);
    await runtime.result('00000000-0000-0000-0000-000000000000').catch(() => undefined); // opens and migrates
    const children = [];
    for (let i = 0; i < workers; i++) children.push(await startWorker({ configFile, database, redis: REDIS_URL, queue: { prefix, concurrency: 8 } }));
    const workerCpuBefore = await Promise.all(children.map(cpuOf));
    const apiCpuBefore = process.cpuUsage();
    const started = performance.now();
    const runs = await Promise.all(Array.from({ length: OPS }, (_, i) => runtime.execAgent({ agentId: 'plain', prompt: `op ${i}` })));
    const results = await Promise.all(runs.map((r) => r.done));
    const seconds = (performance.now() - started) / 1000;
    const apiCpu = process.cpuUsage(apiCpuBefore);
    const workerCpuAfter = await Promise.all(children.map(cpuOf));
    const steps = OPS * STEPS_PER_OPERATION;
    const workerCpuUs = workerCpuAfter.reduce((sum, after, i) => sum + after - workerCpuBefore[i], 0);
    const lost = results.filter((r) => r.reason !== 'done').length;
    await Promise.all(children.map((child) => new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM')))));
    await api.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    return { opsPerSecond: OPS / seconds, lost, workerCpuMsPerStep: workerCpuUs / 1000 / steps, apiCpuMsPerStep: (apiCpu.user + apiCpu.system) / 1000 / steps };
  });
}

const rates = {};
const cpu = {};
for (const workers of [1, 2, 3]) {
  const { opsPerSecond, lost, workerCpuMsPerStep, apiCpuMsPerStep } = await measure(workers);
  rates[workers] = opsPerSecond;
  cpu[workers] = workerCpuMsPerStep;
  console.log(
    `workers=${workers} ops=${OPS} ops-per-s=${opsPerSecond.toFixed(1)} not-done=${lost} worker-cpu-ms-per-step=${workerCpuMsPerStep.toFixed(2)} api-cpu-ms-per-step=${apiCpuMsPerStep.toFixed(2)}`,
  );
}
rmSync(dir, { recursive: true, force: true });
console.log(
  `RESULT queue-scaling w1=${rates[1].toFixed(1)} w2=${rates[2].toFixed(1)} w3=${rates[3].toFixed(1)} w3/w1=${(rates[3] / rates[1]).toFixed(2)} cpu-ms-per-step=${cpu[1].toFixed(2)}`,
);
process.exit(0);
