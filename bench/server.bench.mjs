// The standalone server under load: concurrent clients each start a scripted operation over HTTP
// (POST /v1/operations, the quickstart clock conversation: two model steps and one local tool) and wait for
// it to reach its terminal state (GET /v1/operations/:id), for a fixed time, against ONE built server process
// on SQLite. Then the same clients against a bare Nest app that answers 201 with no work: the ceiling.
//   npm run bench:server   → throughput, p50/p99, the ratio to the ceiling, and last line
//   `RESULT server ops-per-s=<n> p99-ms=<n> lost=<n>` (lost: accepted operations that never reached a
//   terminal state; must be 0). BENCH_SECONDS (15), BENCH_CEILING_SECONDS (5), BENCH_CLIENTS (16);
//   BENCH_NODE_FLAGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") is passed to both server processes.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const CEILING_SECONDS = Number(process.env.BENCH_CEILING_SECONDS ?? 5);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 16);
const WARMUP_MS = 2_000;
/** After the window, how long accepted operations may take to finish before they count as lost. */
const DRAIN_MS = 30_000;

const dir = mkdtempSync(join(tmpdir(), 'agent-hooks-bench-server-'));
writeFileSync(
  join(dir, 'agents.yaml'),
  `system: bench
models:
  clock:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: clock, apiName: now, args: {} } ]
      - content: "It is {{lastToolResult}}."
agents:
  assistant: { model: clock, tools: [ "clock/now" ] }
`,
);

/** Starts a child that prints `listening on http://…`; resolves with its URL. Its output keeps draining. */
function startChild(args) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^AGENT_HOOKS?_/.test(name)));
  const child = spawn(process.execPath, [...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean), ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk) => {
      if (output.length < 100_000) output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        child.stdout.removeListener('data', onData);
        child.stdout.resume(); // keep draining the request log so the server never blocks on its pipe
        resolve({ url: match[1], child, errors: () => output });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code} before listening:\n${output}`)));
  });
}

async function stopChild({ child }) {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  return exited;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** POST one operation; the id when accepted (201), else undefined. */
async function startOperation(pool) {
  const { statusCode, body } = await pool.request({
    method: 'POST',
    path: '/v1/operations',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agentId: 'assistant', prompt: 'What time is it?' }),
  });
  const json = await body.json();
  return statusCode === 201 ? json.operationId : undefined;
}

/** Polls until the operation is completed (its reason), or undefined at the deadline. */
async function terminal(pool, operationId, deadline) {
  let delay = 2;
  while (performance.now() < deadline) {
    const { statusCode, body } = await pool.request({ method: 'GET', path: `/v1/operations/${operationId}` });
    const json = await body.json();
    if (statusCode === 200 && json.status === 'completed') return json.reason;
    await sleep(delay);
    delay = Math.min(delay * 2, 20);
  }
  return undefined;
}

/** Closed-loop clients for `ms`: each starts an operation and, when `untilDone`, waits for its end first. */
async function load(url, ms, untilDone) {
  const pool = new Pool(url, { connections: CLIENTS * 2, pipelining: 1 });
  const started = performance.now();
  const windowEnd = started + ms;
  const stats = { accepted: 0, refused: 0, done: 0, failed: 0, lost: 0, latencies: [] };
  const client = async () => {
    while (performance.now() < windowEnd) {
      const t0 = performance.now();
      const operationId = await startOperation(pool);
      if (!operationId) {
        stats.refused++;
        continue;
      }
      stats.accepted++;
      const reason = untilDone ? await terminal(pool, operationId, windowEnd + DRAIN_MS) : 'done';
      const t1 = performance.now();
      if (reason === undefined) stats.lost++;
      else if (t1 <= windowEnd) {
        // Throughput and latency count operations that finished inside the window.
        if (reason === 'done') stats.done++;
        else stats.failed++;
        stats.latencies.push(t1 - t0);
      } else if (reason !== 'done') stats.failed++;
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  await pool.close();
  stats.latencies.sort((a, b) => a - b);
  return { ...stats, perSecond: (stats.done + stats.failed) / (ms / 1000), p50: percentile(stats.latencies, 50), p99: percentile(stats.latencies, 99) };
}

const fmt = (n) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');

try {
  const server = await startChild(['dist/cli/agentctl.js', 'serve', '--port', '0', '--config', join(dir, 'agents.yaml'), '--database', `sqlite:${join(dir, 'bench.sqlite')}`]);
  let result;
  try {
    await load(server.url, WARMUP_MS, true);
    result = await load(server.url, SECONDS * 1000, true);
  } finally {
    const code = await stopChild(server);
    if (code !== 0) console.log(`server exited with ${code}:\n${server.errors().slice(-2000)}`);
  }

  const bare = await startChild([new URL('./bare-server.mjs', import.meta.url).pathname]);
  let ceiling;
  try {
    await load(bare.url, WARMUP_MS, false);
    ceiling = await load(bare.url, CEILING_SECONDS * 1000, false);
  } finally {
    await stopChild(bare);
  }

  console.log(`${CLIENTS} clients, ${SECONDS} s, one server process on SQLite; each client starts an operation and polls it to its end`);
  console.log(`  server : ${fmt(result.perSecond)} operations/s completed   latency start→completed p50 ${fmt(result.p50)} ms  p99 ${fmt(result.p99)} ms`);
  console.log(`           accepted ${result.accepted}, done ${result.done}, other terminal reasons ${result.failed}, refused ${result.refused}, lost ${result.lost}`);
  console.log(`  ceiling: bare Nest app answering 201 with no work, ${CEILING_SECONDS} s: ${fmt(ceiling.perSecond)} requests/s   p50 ${fmt(ceiling.p50)} ms  p99 ${fmt(ceiling.p99)} ms`);
  console.log(`  ratio  : server operations/s ÷ ceiling requests/s = ${(result.perSecond / ceiling.perSecond).toFixed(3)}`);
  console.log(`RESULT server ops-per-s=${result.perSecond.toFixed(1)} p99-ms=${result.p99.toFixed(1)} lost=${result.lost}`);
  if (result.lost > 0 || result.refused > 0) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
