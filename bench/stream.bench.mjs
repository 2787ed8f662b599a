// SPEC K5, streaming: a local provider (an HTTP server speaking the Chat Completions streaming format) writes
// BENCH_TOKENS tokens, one every BENCH_TOKEN_MS; an SSE client follows GET /v1/operations/:id/events of the
// HTTP API mounted in a Nest app (the package's AgentHooksHttpModule, from the build).
//   time to first delta   at the SSE client minus at the provider (the provider's clock is this process's):
//                         what the runtime and the HTTP API add to the first token (goal: p50 ≤ 5 ms extra)
//   rate ratio            deltas per second the SSE client received ÷ tokens per second the provider wrote,
//                         each over its own first-to-last span (goal ≥ 0.9)
// In local mode (SQLite, the step in this process) and queue mode (PostgreSQL + Redis, the step in a worker
// process, this process serving the API only): the provider and the SSE client are the baseline of the same run.
//   npm run bench:stream   → last line `RESULT stream local-ttfd-extra-p50-ms=… … queue-rate-ratio=…`
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { TextDecoder } from 'node:util';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';
import { AgentHooksHttpModule, AgentHooksModule } from '../dist/index.js';
import { AgentRuntime } from '../dist/runtime/agent-runtime.js';

const TOKENS = Number(process.env.BENCH_TOKENS ?? 500);
const TOKEN_MS = Number(process.env.BENCH_TOKEN_MS ?? 1);
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'agent-hooks-stream-bench-'));
const configFile = join(dir, 'agents.yaml');
writeFileSync(
  configFile,
  `system: stream-bench
models:
  remote: { provider: openai, model: bench, baseUrlEnv: BENCH_LLM_BASE, apiKeyEnv: BENCH_LLM_KEY }
agents:
  writer: { model: remote }
`,
);

// ── The provider: holds each request until the run releases it, then writes one token every TOKEN_MS. ──
let release;
let provided;
const provider = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    const write = (data) => res.write(`data: ${JSON.stringify(data)}\n\n`);
    const times = [];
    const run = () => {
      let n = 0;
      const next = () => {
        times.push(performance.now());
        write({ choices: [{ index: 0, delta: { content: `t${n} ` }, finish_reason: null }] });
        if (++n < TOKENS) return void setTimeout(next, TOKEN_MS);
        write({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
        write({ choices: [], usage: { prompt_tokens: 5, completion_tokens: TOKENS } });
        res.end('data: [DONE]\n\n');
        provided(times);
      };
      next();
    };
    release = run;
  });
});
await new Promise((resolve) => provider.listen(0, '127.0.0.1', resolve));
process.env.BENCH_LLM_BASE = `http://127.0.0.1:${provider.address().port}/v1`;
process.env.BENCH_LLM_KEY = 'bench';

/** One SSE stream read as it arrives: the time of each delta, the text, and when the user message came. */
async function follow(url, onOpen) {
  const response = await fetch(url);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const deltas = [];
  let text = '';
  let buffer = '';
  let opened = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const now = performance.now();
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event === 'delta') {
        deltas.push(now);
        text += JSON.parse(data).text;
      } else if (event === 'message' && !opened) {
        opened = true;
        onOpen();
      }
    }
  }
  return { deltas, text };
}

async function measure(app) {
  const runtime = app.get(AgentRuntime);
  const base = `http://127.0.0.1:${app.getHttpServer().address().port}/agents`;
  const samples = [];
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const { operationId, done } = await runtime.execAgent({ agentId: 'writer', prompt: `run ${i}`, ownerId: 'bench' });
    const written = new Promise((resolve) => (provided = resolve));
    // The provider starts once the client follows the operation and the request reached it.
    let following;
    const opened = new Promise((resolve) => (following = resolve));
    const reading = follow(`${base}/v1/operations/${operationId}/events`, following);
    await opened;
    while (!release) await new Promise((resolve) => setTimeout(resolve, 1));
    const go = release;
    release = undefined;
    go();
    const [times, seen, result] = await Promise.all([written, reading, done]);
    if (seen.text !== result.content) throw new Error(`run ${i}: the deltas (${seen.text.length} chars) are not the published content (${result.content.length} chars)`);
    if (i < WARMUP) continue;
    const producedRate = (times.length - 1) / ((times.at(-1) - times[0]) / 1000);
    const relayedRate = (seen.deltas.length - 1) / ((seen.deltas.at(-1) - seen.deltas[0]) / 1000);
    samples.push({ ttfdExtra: seen.deltas[0] - times[0], ratio: relayedRate / producedRate, deltas: seen.deltas.length });
  }
  const sorted = samples.map((s) => s.ttfdExtra).sort((a, b) => a - b);
  const pick = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const ratios = samples.map((s) => s.ratio).sort((a, b) => a - b);
  return { p50: pick(0.5), p95: pick(0.95), ratio: ratios[Math.floor(ratios.length / 2)], deltas: Math.min(...samples.map((s) => s.deltas)) };
}

async function apiApp(options) {
  class Api {}
  Module({ imports: [AgentHooksModule.forRoot({ isGlobal: true, configFile, ...options }), AgentHooksHttpModule.register({ path: 'agents', owner: () => 'bench', console: false })] })(Api);
  const app = await NestFactory.create(Api, { logger: false });
  await app.listen(0, '127.0.0.1');
  return app;
}

function startWorker(settings) {
  const child = spawn(process.execPath, [join(here, 'queue-worker.mjs'), JSON.stringify(settings)], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('worker ready')) resolve(child);
    });
    child.once('exit', () => reject(new Error(`worker exited: ${out}`)));
  });
}

let local;
const localApp = await apiApp({ database: `sqlite:${join(dir, 'bench.sqlite')}` });
try {
  local = await measure(localApp);
} finally {
  await localApp.close();
}

const schema = `agent_hooks_stream_bench_${Date.now().toString(36)}`;
const database = new URL(DATABASE_URL);
database.searchParams.set('schema', schema);
const prefix = `ahbench-stream-${Date.now().toString(36)}`;
let queued;
const queueApp = await apiApp({ database: database.toString(), mode: 'queue', redis: REDIS_URL, queue: { prefix, worker: false } });
let worker;
try {
  await queueApp.get(AgentRuntime).result('00000000-0000-0000-0000-000000000000').catch(() => undefined); // opens and migrates
  worker = await startWorker({ configFile, database: database.toString(), redis: REDIS_URL, queue: { prefix } });
  queued = await measure(queueApp);
} finally {
  worker?.kill('SIGTERM');
  await queueApp.close();
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
  provider.close();
  rmSync(dir, { recursive: true, force: true });
}

const ms = (value) => value.toFixed(2);
for (const [mode, m] of [['local', local], ['queue', queued]]) {
  console.log(`${mode}: time to first delta at the SSE client minus at the provider p50 ${ms(m.p50)} ms, p95 ${ms(m.p95)} ms; deltas/s relayed ÷ produced ${m.ratio.toFixed(3)} (fewest deltas seen in a run: ${m.deltas} of ${TOKENS})`);
}
console.log(
  `RESULT stream tokens=${TOKENS} token-ms=${TOKEN_MS} runs=${RUNS} local-ttfd-extra-p50-ms=${ms(local.p50)} local-ttfd-extra-p95-ms=${ms(local.p95)} local-rate-ratio=${local.ratio.toFixed(3)} queue-ttfd-extra-p50-ms=${ms(queued.p50)} queue-ttfd-extra-p95-ms=${ms(queued.p95)} queue-rate-ratio=${queued.ratio.toFixed(3)}`,
);
process.exit(0);
