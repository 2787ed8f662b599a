// Queued webhook delivery (`delivery: 'queue'`) against raw BullMQ, same Redis, same concurrency, same run:
//   ours  the delivery service builds the payload and enqueues a job (templates unresolved, job id = webhook-id,
//         bounded retries); the delivery worker resolves the header template, signs (Standard Webhooks),
//         posts through the SSRF-guarded undici client.
//   raw   `queue.add` of the same body + a plain BullMQ worker doing one `undici.request` POST.
// Each round pushes BENCH_JOBS notifications through with BENCH_CONCURRENCY producers and worker concurrency,
// and times it from the first enqueue until the receiver has answered every one. Each notification is of its
// own event (its own operation): the webhook-id names the logical event, so one event sent 4,000 times is
// one job (BullMQ de-duplicates by job id) and would never complete 4,000.
//   npm run bench:queue   → last line `RESULT queue ratio=<ours/raw> deliveries-per-s=<ours>` (goal ≥ 0.8)
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Logger } from '@nestjs/common';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { Agent, request } from 'undici';
import { WebhookDeliveryService } from '../dist/webhooks/webhook-delivery.service.js';
import { QueuedDeliveryService } from '../dist/queue/delivery/queued-delivery.service.js';
import { createWebhookDeliveryWorker } from '../dist/queue/delivery/webhook-delivery-worker.js';
import { redisConnection } from '../dist/queue/queue-connection.js';

const JOBS = Number(process.env.BENCH_JOBS ?? 4_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

Logger.overrideLogger(['error']);
const receiver = spawn(process.execPath, [new URL('./webhook-receiver.mjs', import.meta.url).pathname], { stdio: ['ignore', 'pipe', 'inherit'] });
const [portLine] = await once(receiver.stdout, 'data');
const url = `http://127.0.0.1:${String(portLine).trim()}/notify`;
const admin = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });

process.env.BENCH_HOOK_TOKEN = 'bench-token';
const signingSecret = `whsec_${Buffer.from('bench-signing-key-of-32-bytes!!!').toString('base64')}`;
const event = { id: 'evt-1', type: 'onComplete', operationId: 'op-1', agentId: 'assistant', userId: 'u-1', stepIndex: 3, timestamp: new Date(0).toISOString(), reason: 'done' };
const hook = {
  id: 'notify',
  point: 'onComplete',
  source: 'caller',
  failurePolicy: 'fail',
  onError: 'continue',
  control: false,
  order: 0,
  webhook: { url, delivery: 'queue', timeout: 10, headers: { authorization: 'Bearer ${BENCH_HOOK_TOKEN}' }, allowedEnvVars: ['BENCH_HOOK_TOKEN'] },
};
const rawBody = JSON.stringify({ ...event, hookId: 'notify', hookType: 'onComplete' });

/** Resolves once `count` jobs completed on `worker`; rejects on the first failure (nothing should fail). */
function completions(worker, count) {
  return new Promise((resolve, reject) => {
    let done = 0;
    worker.on('completed', () => {
      if (++done === count) resolve();
    });
    worker.on('failed', (_job, error) => reject(new Error(`a delivery failed: ${error?.name}`)));
  });
}

/** Calls `send(n)` for n = 0 … JOBS-1 from CONCURRENCY producers. */
async function produce(send) {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < JOBS) await send(next++);
    }),
  );
}

/** The n-th notification of a round: the `onComplete` of its own operation. */
function eventOf(round, n) {
  const operationId = `op-${round}-${n}`;
  return { ...event, id: `evt-${round}-${n}`, operationId };
}

let oursRound = 0;
async function ours() {
  const round = oursRound++;
  const prefix = `agent-hooks-bench-${randomUUID().slice(0, 8)}`;
  const options = { mode: 'queue', redis: REDIS_URL, webhooks: { allowNetworks: ['127.0.0.0/8'], signingSecret } };
  const tuning = { prefix, concurrency: CONCURRENCY };
  const queue = new QueuedDeliveryService(options, tuning);
  queue.onModuleInit();
  const delivery = new WebhookDeliveryService(options, undefined, queue);
  const worker = createWebhookDeliveryWorker(queue.settings);
  await worker.worker.waitUntilReady();
  try {
    const all = completions(worker.worker, JOBS);
    const started = performance.now();
    await produce((n) => {
      const distinct = eventOf(round, n);
      return delivery.notify({ hook, point: 'onComplete', event: distinct, operationId: distinct.operationId });
    });
    await all;
    return JOBS / ((performance.now() - started) / 1000);
  } finally {
    await worker.close();
    await queue.close();
    await delivery.close();
    await clean(prefix);
  }
}

async function raw() {
  const prefix = `agent-hooks-bench-${randomUUID().slice(0, 8)}`;
  const name = 'agent-hooks-bench-raw';
  const agent = new Agent({ connections: CONCURRENCY, headersTimeout: 0, bodyTimeout: 0 });
  const queue = new Queue(name, { connection: redisConnection(REDIS_URL), prefix });
  const worker = new Worker(
    name,
    async (job) => {
      const { statusCode, body } = await request(url, {
        dispatcher: agent,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer bench-token' },
        body: job.data.body,
      });
      await body.dump();
      if (statusCode < 200 || statusCode > 299) throw new Error(`HTTP ${statusCode}`);
    },
    { connection: redisConnection(REDIS_URL), prefix, concurrency: CONCURRENCY },
  );
  await worker.waitUntilReady();
  try {
    const all = completions(worker, JOBS);
    const started = performance.now();
    await produce(() => queue.add('webhook', { body: rawBody }, { removeOnComplete: true }));
    await all;
    return JOBS / ((performance.now() - started) / 1000);
  } finally {
    await worker.close();
    await queue.close();
    await agent.close();
    await clean(prefix);
  }
}

async function clean(prefix) {
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await admin.del(...keys);
  } while (cursor !== '0');
}

try {
  await ours(); // warm-up both
  await raw();
  const oursRates = [];
  const rawRates = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      oursRates.push(await ours());
      rawRates.push(await raw());
    } else {
      rawRates.push(await raw());
      oursRates.push(await ours());
    }
  }
  const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
  const o = median(oursRates);
  const r = median(rawRates);
  console.log(`c${CONCURRENCY} ${JOBS} notifications/round   ours ${o.toFixed(0).padStart(6)} deliveries/s   raw BullMQ+undici ${r.toFixed(0).padStart(6)} deliveries/s   ratio ${(o / r).toFixed(2)}`);
  console.log(`RESULT queue ratio=${(o / r).toFixed(2)} deliveries-per-s=${o.toFixed(0)}`);
} finally {
  admin.disconnect();
  receiver.kill('SIGTERM');
}
