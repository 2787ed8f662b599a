// Control decisions per second against one loopback receiver, at concurrency 1 and 50:
// our delivery (send-time header templates, Standard Webhooks signing, SSRF guard, capped body read,
// decision parser) vs raw `undici.request` on an Agent with the same settings, in the same run.
//   npm run bench:webhook   → last line `RESULT webhook c1=<ratio> c50=<ratio>` (ours/raw; goal ≥ 0.8)
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Agent, request } from 'undici';
import { WebhookDeliveryService } from '../dist/webhooks/webhook-delivery.service.js';
import { readDecision } from '../dist/hooks/decision.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

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

const rawAgent = new Agent({ connections: 32, headersTimeout: 0, bodyTimeout: 0 });
const rawBody = JSON.stringify({ ...event, hookId: 'policy', hookType: 'beforeToolCall' });
async function raw() {
  const { statusCode, body } = await request(url, {
    dispatcher: rawAgent,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench-token' },
    body: rawBody,
  });
  const parsed = await body.json();
  if (statusCode !== 200 || parsed.decision !== 'allow') throw new Error('expected allow');
}

async function throughput(fn, concurrency) {
  const deadline = performance.now() + SECONDS * 1000;
  let done = 0;
  async function worker() {
    while (performance.now() < deadline) {
      await fn();
      done++;
    }
  }
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return done / ((performance.now() - started) / 1000);
}

async function compare(concurrency) {
  await throughput(ours, concurrency); // warm-up both
  await throughput(raw, concurrency);
  const oursRates = [];
  const rawRates = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      oursRates.push(await throughput(ours, concurrency));
      rawRates.push(await throughput(raw, concurrency));
    } else {
      rawRates.push(await throughput(raw, concurrency));
      oursRates.push(await throughput(ours, concurrency));
    }
  }
  const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
  const o = median(oursRates);
  const r = median(rawRates);
  console.log(`c${String(concurrency).padEnd(3)} ours ${o.toFixed(0).padStart(6)} decisions/s   raw undici ${r.toFixed(0).padStart(6)} decisions/s   ratio ${(o / r).toFixed(2)}`);
  return o / r;
}

try {
  const c1 = await compare(1);
  const c50 = await compare(50);
  console.log(`RESULT webhook c1=${c1.toFixed(2)} c50=${c50.toFixed(2)}`);
} finally {
  await delivery.close();
  await rawAgent.close();
  receiver.kill('SIGTERM');
}
