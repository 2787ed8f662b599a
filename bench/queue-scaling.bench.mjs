// Queue mode scaling: scripted operations (two clock steps and an answer) per second through BullMQ step
// jobs with 1, 2 and 3 worker processes, one API process (this one, no worker), same PostgreSQL and Redis.
// CPU per step is the workers' CPU time (`process.cpuUsage`, user + system, asked over IPC) from the first
// execAgent to the last result, over the steps run (3 per operation); the API process's share is printed apart.
// Also per step, counted at each worker's client: SQL statements and Redis commands (BullMQ's included).
// Each measurement follows BENCH_WARMUP_OPS (600) operations per worker through the same processes, not
// counted: a fresh worker's optimizing compiler runs on its own threads through the first thousands of steps,
// and that CPU is the process's, not the steps' (a worker runs for hours); per worker, so that three workers
// are as warm as one. The warm-up's own CPU per step is printed too
// (`cold-…`), in the RESULT line as `cold-cpu-ms-per-step`.
//   node bench/queue-scaling.bench.mjs
//   BENCH_WORKERS=1 measures only that count; BENCH_TRACE=1 lists the statements and commands per step;
//   BENCH_CPU_PROF=<dir> writes each worker's CPU profile there (node --cpu-prof); BENCH_WORKER_NODE_ARGS adds
//   node options to the workers (e.g. `--perf-basic-prof` for `perf record -p <pid>`); BENCH_WORKER_LOG=<path>
//   writes each worker's output to <path>.<pid> (e.g. with `--trace-deopt`).
//   → `RESULT queue-scaling w1=<ops/s> w2=<ops/s> w3=<ops/s> w3/w1=<ratio> cpu-ms-per-step=<worker CPU at w1>
//      cold-cpu-ms-per-step=<the same over the warm-up> statements-per-step=<at w1> redis-per-step=<at w1>`
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import pg from 'pg';
import { AgentHooksModule, AgentRuntime } from '../dist/index.js';

const OPS = Number(process.env.BENCH_OPS ?? 150);
const WARMUP_OPS = Number(process.env.BENCH_WARMUP_OPS ?? 600);
const WORKER_COUNTS = process.env.BENCH_WORKERS ? process.env.BENCH_WORKERS.split(',').map(Number) : [1, 2, 3];
const CPU_PROF = process.env.BENCH_CPU_PROF;
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
  const profile = [...(CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF] : []), ...(process.env.BENCH_WORKER_NODE_ARGS?.split(' ').filter(Boolean) ?? [])];
  const child = spawn(process.execPath, [...profile, join(here, 'queue-worker.mjs'), JSON.stringify(settings)], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const log = process.env.BENCH_WORKER_LOG ? createWriteStream(`${process.env.BENCH_WORKER_LOG}.${child.pid}`) : undefined;
    child.stdout.on('data', (chunk) => {
      log?.write(chunk);
      if (out.length < 100_000) out += chunk;
      if (out.includes('worker ready')) resolve(child);
    });
    child.once('exit', () => reject(new Error(`worker exited: ${out}`)));
  });
}

/** A worker's CPU time so far, in microseconds (user + system), and what it sent: statements, Redis commands. */
function cpuOf(child) {
  return new Promise((resolve, reject) => {
    child.once('message', (message) => resolve({ us: message.cpu.user + message.cpu.system, statements: message.statements, redis: message.redis, trace: message.trace }));
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
    const coldBefore = await Promise.all(children.map(cpuOf));
    const warmOps = WARMUP_OPS * workers;
    const warm = await Promise.all(Array.from({ length: warmOps }, (_, i) => runtime.execAgent({ agentId: 'plain', prompt: `warm-up ${i}` })));
    await Promise.all(warm.map((r) => r.done));
    const workerCpuBefore = await Promise.all(children.map(cpuOf));
    const coldCpuUs = workerCpuBefore.reduce((sum, now, i) => sum + now.us - coldBefore[i].us, 0);
    const apiCpuBefore = process.cpuUsage();
    const started = performance.now();
    const runs = await Promise.all(Array.from({ length: OPS }, (_, i) => runtime.execAgent({ agentId: 'plain', prompt: `op ${i}` })));
    const results = await Promise.all(runs.map((r) => r.done));
    const seconds = (performance.now() - started) / 1000;
    const apiCpu = process.cpuUsage(apiCpuBefore);
    const workerCpuAfter = await Promise.all(children.map(cpuOf));
    const steps = OPS * STEPS_PER_OPERATION;
    const sumOf = (key) => workerCpuAfter.reduce((sum, after, i) => sum + after[key] - workerCpuBefore[i][key], 0);
    const workerCpuUs = sumOf('us');
    if (workerCpuAfter[0].trace) printTrace(workerCpuBefore, workerCpuAfter, steps);
    const lost = results.filter((r) => r.reason !== 'done').length;
    await Promise.all(children.map((child) => new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM')))));
    await api.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    return {
      opsPerSecond: OPS / seconds,
      lost,
      workerCpuMsPerStep: workerCpuUs / 1000 / steps,
      coldWorkerCpuMsPerStep: warmOps > 0 ? coldCpuUs / 1000 / (warmOps * STEPS_PER_OPERATION) : undefined,
      apiCpuMsPerStep: (apiCpu.user + apiCpu.system) / 1000 / steps,
      statementsPerStep: sumOf('statements') / steps,
      redisPerStep: sumOf('redis') / steps,
    };
  });
}

/** BENCH_TRACE=1: the workers' statements and Redis commands over the measurement, per step, most first. */
function printTrace(before, after, steps) {
  const totals = new Map();
  after.forEach((report, i) => {
    for (const [text, n] of Object.entries(report.trace)) totals.set(text, (totals.get(text) ?? 0) + n - (before[i].trace[text] ?? 0));
  });
  for (const [text, n] of [...totals].sort((a, b) => b[1] - a[1])) if (n > 0) console.log(`  ${(n / steps).toFixed(2)}  ${text}`);
}

const rates = {};
const cpu = {};
const cold = {};
const sent = {};
for (const workers of WORKER_COUNTS) {
  const { opsPerSecond, lost, workerCpuMsPerStep, coldWorkerCpuMsPerStep, apiCpuMsPerStep, statementsPerStep, redisPerStep } = await measure(workers);
  rates[workers] = opsPerSecond;
  cpu[workers] = workerCpuMsPerStep;
  cold[workers] = coldWorkerCpuMsPerStep;
  sent[workers] = { statementsPerStep, redisPerStep };
  console.log(
    `workers=${workers} ops=${OPS} ops-per-s=${opsPerSecond.toFixed(1)} not-done=${lost} worker-cpu-ms-per-step=${workerCpuMsPerStep.toFixed(2)} cold-worker-cpu-ms-per-step=${coldWorkerCpuMsPerStep?.toFixed(2) ?? 'n/a'} api-cpu-ms-per-step=${apiCpuMsPerStep.toFixed(2)} worker-statements-per-step=${statementsPerStep.toFixed(2)} worker-redis-per-step=${redisPerStep.toFixed(2)}`,
  );
}
rmSync(dir, { recursive: true, force: true });
const first = WORKER_COUNTS[0];
const fixed = (value, digits) => (value === undefined ? 'n/a' : value.toFixed(digits));
console.log(
  `RESULT queue-scaling w1=${fixed(rates[1], 1)} w2=${fixed(rates[2], 1)} w3=${fixed(rates[3], 1)} w3/w1=${rates[1] && rates[3] ? (rates[3] / rates[1]).toFixed(2) : 'n/a'} cpu-ms-per-step=${fixed(cpu[1] ?? cpu[first], 2)} cold-cpu-ms-per-step=${fixed(cold[1] ?? cold[first], 2)} statements-per-step=${fixed((sent[1] ?? sent[first]).statementsPerStep, 2)} redis-per-step=${fixed((sent[1] ?? sent[first]).redisPerStep, 2)}`,
);
process.exit(0);
