// Control decisions per second against one loopback receiver, at concurrency 1 and 50:
// our delivery (send-time header templates, Standard Webhooks signing, SSRF guard, one deadline, capped
// body read, decision parser) vs raw `undici.request` in the same run.
//   npm run bench:webhook   → last line `RESULT webhook c1=<ratio> c50=<ratio>` (ours/raw; goal ≥ 0.8)
//
// What keeps the comparison fair on a shared, noisy machine:
// - both sides post through an Agent with the same pool settings (connections, pipelining, keep-alive,
//   undici timers off); ours adds only its guarded connector, which runs once per pooled connection;
// - both serialize the payload per request (a raw sender has to as well) and both read the whole answer;
// - the receiver runs in its own process (webhook-receiver.mjs), not in this event loop;
// - after a warm-up of each side, short rounds alternate ours/raw (the order flips every round) and the
//   ratio is the median of the per-round ratios, so a load change hits both sides of a round alike;
// - CPU µs per decision of this process (`process.cpuUsage`) is printed too: it moves far less with the
//   machine's load than decisions/s do.
// BENCH_SECONDS (per round, default 1), BENCH_ROUNDS (default 9).
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { loadavg } from 'node:os';
import { Agent, request } from 'undici';
import { WebhookDeliveryService } from '../dist/webhooks/webhook-delivery.service.js';
import { readDecision } from '../dist/hooks/decision.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
/** Our client's default pool (`WebhookHttpClient`), given to the raw Agent too. */
const CONNECTIONS = 32;

const receiver = spawn(process.execPath, [new URL('./webhook-receiver.mjs', import.meta.url).pathname], { stdio: ['ignore', 'pipe', 'inherit'] });
const [portLine] = await once(receiver.stdout, 'data');
const url = `http://127.0.0.1:${String(portLine).trim()}/decide`;

process.env.BENCH_HOOK_TOKEN = 'bench-token';
const delivery = new WebhookDeliveryService({
  webhooks: { allowNetworks: ['127.0.0.0/8'], signingSecret: `whsec_${Buffer.from('bench-signing-key-of-32-bytes!!!').toString('base64')}` },
});
const hook = {
  id: 'policy',
  point: 'beforeToolCall',
  source: 'caller',
  failurePolicy: 'fail',
  onError: 'block',
  control: false,
  order: 0,
  webhook: { url, responseHandling: 'toolCall', onError: 'block', timeout: 5, headers: { authorization: 'Bearer ${BENCH_HOOK_TOKEN}' }, allowedEnvVars: ['BENCH_HOOK_TOKEN'] },
};
const event = {
  id: 'evt-1', type: 'beforeToolCall', operationId: 'op-1', agentId: 'assistant', userId: 'u-1', stepIndex: 0,
  timestamp: new Date(0).toISOString(), toolCallId: 'call-1', assistantMessageId: 'msg-1', identifier: 'fs',
  apiName: 'readFile', args: { path: '/tmp/a' }, callIndex: 0, executor: 'server',
};

async function ours() {
  const body = await delivery.control({ hook, point: 'beforeToolCall', event, operationId: 'op-1' });
  if (readDecision(body, 'beforeToolCall').kind !== 'allow') throw new Error('expected allow');
}

// WebhookHttpClient's Agent settings, minus the guarded connector.
const rawAgent = new Agent({ connections: CONNECTIONS, pipelining: 1, headersTimeout: 0, bodyTimeout: 0 });
async function raw() {
  const { statusCode, body } = await request(url, {
    dispatcher: rawAgent,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench-token' },
    // The same payload ours posts, serialized per request as any sender of a live event must.
    body: JSON.stringify({ ...event, hookId: 'policy', hookType: 'beforeToolCall' }),
  });
  const parsed = await body.json();
  if (statusCode !== 200 || parsed.decision !== 'allow') throw new Error('expected allow');
}

/** Decisions per second and CPU µs (user + system, this process) per decision over one round. */
async function round(fn, concurrency, seconds) {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  async function worker() {
    while (performance.now() < deadline) {
      await fn();
      done++;
    }
  }
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { rate: done / elapsed, cpuUs: (used.user + used.system) / done };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function compare(concurrency) {
  // Warm-up: JIT for both paths and a full connection pool on both Agents.
  await round(ours, concurrency, SECONDS);
  await round(raw, concurrency, SECONDS);
  const rounds = [];
  for (let index = 0; index < ROUNDS; index++) {
    const first = index % 2 === 0 ? ours : raw;
    const a = await round(first, concurrency, SECONDS);
    const b = await round(first === ours ? raw : ours, concurrency, SECONDS);
    rounds.push(first === ours ? { ours: a, raw: b } : { ours: b, raw: a });
  }
  const ratio = median(rounds.map((r) => r.ours.rate / r.raw.rate));
  const o = median(rounds.map((r) => r.ours.rate));
  const r = median(rounds.map((r) => r.raw.rate));
  const oCpu = median(rounds.map((r) => r.ours.cpuUs));
  const rCpu = median(rounds.map((r) => r.raw.cpuUs));
  const spread = rounds.map((r) => (r.ours.rate / r.raw.rate).toFixed(2)).join(' ');
  console.log(
    `c${String(concurrency).padEnd(3)} ours ${o.toFixed(0).padStart(6)} decisions/s   raw undici ${r.toFixed(0).padStart(6)} decisions/s   ratio ${ratio.toFixed(2)} (rounds ${spread})`,
  );
  console.log(`     cpu per decision: ours ${oCpu.toFixed(1)} µs   raw ${rCpu.toFixed(1)} µs   ratio ${(rCpu / oCpu).toFixed(2)}`);
  return ratio;
}

try {
  const loadBefore = loadavg()[0];
  const c1 = await compare(1);
  const c50 = await compare(50);
  // The machine is shared: the 1-minute load average says how much the figures above had to compete.
  console.log(`load average (1 min) ${loadBefore.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end`);
  console.log(`RESULT webhook c1=${c1.toFixed(2)} c50=${c50.toFixed(2)}`);
} finally {
  await delivery.close();
  await rawAgent.close();
  receiver.kill('SIGTERM');
}
