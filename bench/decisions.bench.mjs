// Decisions in milliseconds: how long a person (or a policy service) waits for a decision request, on the
// built server (`agentctl serve`, child processes), PostgreSQL (own schema) and SQLite (temp file).
// Per sample, one operation of a scripted model (`clock/now`, then an answer) is started and, once its
// `GET …/events` stream says it waits, decided — approve, rejectAndContinue (POST …/interventions/:id) or a
// deferred result (POST …/tool-results/:id) — and the request timed, send → response; the operation then
// runs to its end before the next sample (untimed). Baseline, same run, right before each sample: the
// same request shape against a bare Nest app that runs one transaction the size of a decision's on the
// same database (bench/bare-decision-server.mjs), so both see the same moment of the machine.
// PostgreSQL runs two server processes on one schema: decisions go to the first, the event stream is read
// from the second, so each approval also times approval → SSE event in another process (send → the
// first event after it on the second server's stream).
//   npm run bench:decisions → last line
//   `RESULT decisions pg-ratio=<n> sqlite-ratio=<n> pg-p50-ms=<n> pg-p99-ms=<n> sse-p50-ms=<n> sse-p90-ms=<n> pg-worst-ratio=<n>`
// (ratios: p50 of every decision request ÷ p50 of the bare route; worst: the slowest kind's).
// BENCH_SAMPLES (60 per kind and database), BENCH_WARMUP (10), BENCH_ONLY=pg|sqlite,
// BENCH_NODE_FLAGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") is passed to the decision servers.
import { spawn } from 'node:child_process';
import { TextDecoder } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 60);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 10);
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const KINDS = ['approve', 'rejectAndContinue', 'toolResult'];

const dir = mkdtempSync(join(tmpdir(), 'agent-hooks-bench-decisions-'));
const config = join(dir, 'agents.yaml');
writeFileSync(
  config,
  `system: bench
models:
  clock:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: clock, apiName: now, args: {} } ]
      - content: "It is {{lastToolResult}}."
agents:
  approver: { model: clock, tools: [ "clock/now" ], approval: [ "^clock/" ] }
  deferring: { model: clock, tools: [ "clock/now" ], deferred: [ "^clock/" ] }
`,
);

/** Starts a child that prints `listening on http://…`; resolves with its URL. Its output keeps draining. */
function startChild(args, nodeFlags = []) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^AGENT_HOOKS?_/.test(name)));
  const child = spawn(process.execPath, [...nodeFlags, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk) => {
      if (output.length < 100_000) output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        child.stdout.removeListener('data', onData);
        child.stdout.resume(); // keep draining the request log so the server never blocks on its pipe
        resolve({ url: match[1], child, pool: new Pool(match[1], { connections: 4, pipelining: 1 }), errors: () => output });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code} before listening:\n${output}`)));
  });
}

const serverFlags = () => (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
const startServer = (database) => startChild(['dist/cli/agentctl.js', 'serve', '--port', '0', '--config', config, '--database', database], serverFlags());
const startBare = (database) => startChild([new URL('./bare-decision-server.mjs', import.meta.url).pathname, database]);

async function stopChild(server) {
  await server.pool.close();
  if (server.child.exitCode !== null) return server.child.exitCode;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  return exited;
}

async function post(server, path, body) {
  const { statusCode, body: reply } = await server.pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await reply.json();
  if (statusCode >= 300) throw new Error(`POST ${path} → ${statusCode} ${JSON.stringify(json)}`);
  return json;
}

/**
 * Follows an operation's SSE stream: `waiting()` resolves with the view once it waits, `firstAfter(t)` with
 * the arrival time of the first event that arrived at or after `t`, `end()` with the last status.
 */
function follow(url, operationId) {
  const arrivals = [];
  let lastStatus;
  let onArrival = () => undefined;
  let waitingView;
  const controller = new AbortController();
  const ended = (async () => {
    const response = await fetch(`${url}/v1/operations/${operationId}/events`, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
    if (response.status !== 200) throw new Error(`GET events → ${response.status}`);
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body) {
      const at = performance.now();
      buffer += decoder.decode(chunk, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields = {};
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
        }
        if (fields.data === undefined) continue;
        const data = JSON.parse(fields.data);
        if (fields.event === 'status') {
          lastStatus = data;
          if (data.status === 'waiting' && data.pendingTools?.length && !waitingView) waitingView = data;
        }
        arrivals.push(at);
        onArrival();
      }
    }
    return lastStatus;
  })();
  const until = (check) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`operation ${operationId}: timed out on its event stream`)), 30_000);
      const test = () => {
        const value = check();
        if (value !== undefined) {
          clearTimeout(timer);
          resolve(value);
          return true;
        }
        return false;
      };
      if (test()) return;
      const previous = onArrival;
      onArrival = () => {
        previous();
        test();
      };
      ended.then(() => test() || reject(new Error(`operation ${operationId}: stream ended early`)), reject);
    });
  return {
    waiting: () => until(() => waitingView),
    firstAfter: (t) => until(() => arrivals.find((at) => at >= t)),
    end: async () => {
      const timer = setTimeout(() => controller.abort(), 30_000);
      try {
        return await ended;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
const stats = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), n: sorted.length };
};

/** One sample: a waiting operation, the bare request, the decision request (timed), then the run's end. */
async function sample(kind, decider, watcher, bare) {
  const agentId = kind === 'toolResult' ? 'deferring' : 'approver';
  const { operationId } = await post(decider, '/v1/operations', { agentId, prompt: 'What time is it?' });
  const stream = follow(watcher.url, operationId);
  const view = await stream.waiting();
  const toolCallId = view.pendingTools[0].toolCallId;
  const b0 = performance.now();
  await post(bare, `/v1/operations/${operationId}/interventions/${toolCallId}`, { action: 'approve' });
  const bareMs = performance.now() - b0;
  const path = kind === 'toolResult' ? `/v1/operations/${operationId}/tool-results/${toolCallId}` : `/v1/operations/${operationId}/interventions/${toolCallId}`;
  const body = kind === 'toolResult' ? { content: 'noon', success: true } : kind === 'approve' ? { action: 'approve' } : { action: 'rejectAndContinue', reason: 'Not now.' };
  const t0 = performance.now();
  await post(decider, path, body);
  const requestMs = performance.now() - t0;
  const seenMs = (await stream.firstAfter(t0)) - t0;
  const last = await stream.end();
  if (last?.status !== 'completed' || last.reason !== 'done') throw new Error(`operation ${operationId} ended ${JSON.stringify(last)}`);
  return { requestMs, bareMs, seenMs };
}

/** Warm-up, then SAMPLES per kind, kinds interleaved so each sees the same stretch of the run. */
async function measure(label, decider, watcher, bare) {
  for (let i = 0; i < WARMUP; i++) for (const kind of KINDS) await sample(kind, decider, watcher, bare);
  const byKind = Object.fromEntries(KINDS.map((kind) => [kind, { request: [], bare: [], seen: [] }]));
  for (let i = 0; i < SAMPLES; i++) {
    for (const kind of KINDS) {
      const { requestMs, bareMs, seenMs } = await sample(kind, decider, watcher, bare);
      byKind[kind].request.push(requestMs);
      byKind[kind].bare.push(bareMs);
      byKind[kind].seen.push(seenMs);
    }
  }
  const all = stats(KINDS.flatMap((kind) => byKind[kind].request));
  const bareAll = stats(KINDS.flatMap((kind) => byKind[kind].bare));
  const fmt = (n) => n.toFixed(2);
  console.log(`${label}: ${SAMPLES} samples per kind, one at a time (bare route p50 ${fmt(bareAll.p50)} ms, p99 ${fmt(bareAll.p99)} ms)`);
  let worst = 0;
  for (const kind of KINDS) {
    const s = stats(byKind[kind].request);
    const ratio = s.p50 / bareAll.p50;
    worst = Math.max(worst, ratio);
    console.log(`  ${kind.padEnd(18)} p50 ${fmt(s.p50)} ms  p99 ${fmt(s.p99)} ms  ×${ratio.toFixed(2)} of the bare route at p50`);
  }
  console.log(`  ${'all decisions'.padEnd(18)} p50 ${fmt(all.p50)} ms  p99 ${fmt(all.p99)} ms  ×${(all.p50 / bareAll.p50).toFixed(2)}`);
  const seen = stats(byKind.approve.seen);
  const where = watcher === decider ? 'the same process' : 'another process';
  console.log(`  approval → SSE event in ${where}: p50 ${fmt(seen.p50)} ms  p90 ${fmt(seen.p90)} ms  p99 ${fmt(seen.p99)} ms`);
  return { all, bare: bareAll, ratio: all.p50 / bareAll.p50, worst, seen };
}

async function dropSchema(schema) {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}

function schemaUrl(schema) {
  const url = new URL(DATABASE_URL);
  url.searchParams.set('schema', schema);
  return url.toString();
}

/** Runs `body` with the servers `starts` made, stopping them all afterwards (a failing exit is shown). */
async function withServers(starts, body) {
  const servers = [];
  try {
    for (const start of starts) servers.push(await start());
    return await body(...servers);
  } finally {
    for (const server of servers) {
      const code = await stopChild(server);
      if (code !== 0 && code !== null) console.log(`a server exited with ${code}:\n${server.errors().slice(-2000)}`);
    }
  }
}

const stamp = Date.now().toString(36);
const pgSchema = `agent_hooks_decisions_bench_${stamp}`;
const pgBareSchema = `agent_hooks_decisions_bare_${stamp}`;
const only = process.env.BENCH_ONLY;
let pgResult;
let sqliteResult;
try {
  if (only === undefined || only === 'pg') {
    // The second server starts once the first has migrated the schema.
    pgResult = await withServers([() => startServer(schemaUrl(pgSchema)), () => startServer(schemaUrl(pgSchema)), () => startBare(schemaUrl(pgBareSchema))], (decider, watcher, bare) =>
      measure('PostgreSQL, two server processes on one schema', decider, watcher, bare),
    );
  }
  if (only === undefined || only === 'sqlite') {
    sqliteResult = await withServers([() => startServer(`sqlite:${join(dir, 'bench.sqlite')}`), () => startBare(`sqlite:${join(dir, 'bare.sqlite')}`)], (server, bare) =>
      measure('SQLite, one server process', server, server, bare),
    );
  }
} finally {
  await dropSchema(pgSchema).catch(() => undefined);
  await dropSchema(pgBareSchema).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}

if (pgResult && sqliteResult) {
  console.log(
    `RESULT decisions pg-ratio=${pgResult.ratio.toFixed(2)} sqlite-ratio=${sqliteResult.ratio.toFixed(2)} pg-p50-ms=${pgResult.all.p50.toFixed(2)} pg-p99-ms=${pgResult.all.p99.toFixed(2)}` +
      ` sse-p50-ms=${pgResult.seen.p50.toFixed(2)} sse-p90-ms=${pgResult.seen.p90.toFixed(2)} pg-worst-ratio=${pgResult.worst.toFixed(2)}`,
  );
}
