/**
 * `delivery: 'queue'` end to end on a real Redis: the dispatcher enqueues a BullMQ job, the delivery worker
 * posts it to a real loopback receiver with the hardened client. Each test has its own key prefix (and so
 * its own queue) and deletes its keys afterwards.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Redis } from 'ioredis';
import { Webhook } from 'standardwebhooks';
import { CriticalHookDeliveryError } from '../../../src/hooks/hook-errors.js';
import type { AgentHook } from '../../../src/hooks/agent-hook.js';
import { RuntimeDatabase } from '../../../src/persistence/runtime-database.js';
import { timelineItemView, type TimelineItemView } from '../../../src/runtime/reading/operation-views.js';
import { toolCallIdempotencyKey } from '../../../src/runtime/tools/idempotency-key.js';
import { startReceiver, type LoopbackReceiver, type RecordedRequest } from '../../unit/webhooks/loopback-receiver.js';
import { bootDelivery, SIGNING_SECRET, type DeliveryHarness, type HarnessOptions } from './delivery-harness.js';
import { eventually } from '../../support/eventually.js';
import { deleteKeys, dumpKeys, freePort, SHARED_REDIS_URL, startPrivateRedis, uniquePrefix } from './redis-fixtures.js';

const event = { id: 'e', type: 'onComplete', operationId: 'op-1', agentId: 'a', stepIndex: 0, timestamp: '', reason: 'done' } as const;

let receiver: LoopbackReceiver;
let admin: Redis;
let prefix: string;
let harness: DeliveryHarness | undefined;
/** Arrival time of each request, by path. */
const arrivals = new Map<string, number[]>();

function timed(path: string, behaviour: (req: IncomingMessage, res: ServerResponse, attempt: number) => void): void {
  receiver.route(path, (req, res) => {
    const times = arrivals.get(path) ?? [];
    times.push(Date.now());
    arrivals.set(path, times);
    behaviour(req, res, times.length);
  });
}

function requestsTo(path: string): RecordedRequest[] {
  return receiver.requests.filter((r) => r.path === path);
}

async function boot(options: Partial<HarnessOptions> = {}): Promise<DeliveryHarness> {
  harness = await bootDelivery({
    redis: SHARED_REDIS_URL,
    ...options,
    tuning: { prefix, attempts: 4, backoffDelayMs: 50, maxBackoffDelayMs: 200, enqueueTimeoutMs: 1_000, concurrency: 4, ...options.tuning },
  });
  return harness;
}

function hook(id: string, path: string, extra: Partial<NonNullable<AgentHook['webhook']>> = {}): AgentHook {
  return { id, type: 'onComplete', webhook: { url: receiver.url(path), delivery: 'queue', timeout: 5, ...extra } };
}

function verifies(request: RecordedRequest): boolean {
  const headers = {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  };
  try {
    new Webhook(SIGNING_SECRET).verify(request.body, headers);
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  receiver = await startReceiver();
  admin = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  admin.disconnect();
  await receiver.close();
});

beforeEach(() => {
  prefix = uniquePrefix();
  receiver.requests.length = 0;
  arrivals.clear();
});

afterEach(async () => {
  delete process.env.QUEUE_HOOK_TOKEN;
  await harness?.close();
  harness = undefined;
  await deleteKeys(admin, prefix);
});

describe('W6/S2 queued jobs carry templates, never resolved secrets', () => {
  it('W6: the job in Redis holds the header template; the worker resolves it at send time', async () => {
    const secret = 'resolved-queue-secret-7f3a9c';
    process.env.QUEUE_HOOK_TOKEN = secret;
    try {
      timed('/ok', (_req, res) => res.writeHead(204).end());
      const { registry, dispatcher, workers } = await boot({ worker: false });
      registry.register('op-1', [hook('q', '/ok', { headers: { authorization: 'Bearer ${QUEUE_HOOK_TOKEN}' }, allowedEnvVars: ['QUEUE_HOOK_TOKEN'] })]);
      await dispatcher.dispatch('onComplete', event);

      // No worker yet: the job waits in Redis. Everything stored under this queue's prefix is read back.
      const stored = await dumpKeys(admin, prefix);
      expect(stored).toContain('Bearer ${QUEUE_HOOK_TOKEN}');
      expect(stored).not.toContain(secret);
      expect(stored).not.toContain('webhook-signature');
      expect(requestsTo('/ok')).toHaveLength(0);

      await workers.start();
      await eventually(() => requestsTo('/ok').length === 1, 'the queued delivery');
      expect(requestsTo('/ok')[0]!.headers.authorization).toBe(`Bearer ${secret}`);
      expect(await dumpKeys(admin, prefix)).not.toContain(secret);
    } finally {
      delete process.env.QUEUE_HOOK_TOKEN;
    }
  });
});

describe('queued delivery retries', () => {
  it('retries with backoff until success; every attempt has the same webhook-id and a valid signature, so the receiver de-duplicates', async () => {
    const processed = new Set<string>();
    let effects = 0;
    timed('/flaky', (req, res, attempt) => {
      const id = String(req.headers['webhook-id']);
      // Attempt 1 does the work but its answer is lost (500); attempt 2 fails outright; attempt 3 is a duplicate.
      if (!processed.has(id) && attempt !== 2) {
        processed.add(id);
        effects++;
      }
      res.writeHead(attempt < 3 ? (attempt === 1 ? 500 : 503) : 200).end();
    });
    const { registry, dispatcher, records, settled } = await boot();
    registry.register('op-1', [hook('q', '/flaky')]);
    await dispatcher.dispatch('onComplete', event);

    await eventually(() => requestsTo('/flaky').length === 3, 'three attempts');
    await eventually(() => requestsTo('/flaky').every((r) => r.body.length > 0), 'request bodies');
    const attempts = requestsTo('/flaky');
    expect(new Set(attempts.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(String(attempts[0]!.headers['webhook-id'])).toMatch(/^msg_/);
    expect(attempts.every(verifies)).toBe(true);
    expect(effects).toBe(1);
    await settled(); // the job is over: no attempt can follow
    expect(requestsTo('/flaky')).toHaveLength(3); // success ends the retries
    expect(records.filter((r) => r.outcome === 'error')).toEqual([]);
  });

  it('Retry-After is honoured: the retry comes no earlier than the receiver asked, with a fresh timestamp and signature', async () => {
    timed('/busy', (_req, res, attempt) => {
      if (attempt === 1) res.writeHead(503, { 'retry-after': '2' }).end();
      else res.writeHead(200).end();
    });
    const { registry, dispatcher } = await boot();
    registry.register('op-1', [hook('q', '/busy')]);
    await dispatcher.dispatch('onComplete', event);

    await eventually(() => requestsTo('/busy').length === 2, 'the retry', 20_000);
    const [first, second] = arrivals.get('/busy')!;
    // The backoff alone would retry after ~50 ms; loosely measured (shared machine), never early.
    expect(second! - first!).toBeGreaterThanOrEqual(1_900);
    await eventually(() => requestsTo('/busy').every((r) => r.body.length > 0), 'request bodies');
    const [a, b] = requestsTo('/busy');
    expect(b!.headers['webhook-id']).toBe(a!.headers['webhook-id']);
    expect(Number(b!.headers['webhook-timestamp'])).toBeGreaterThan(Number(a!.headers['webhook-timestamp']));
    expect(verifies(a!) && verifies(b!)).toBe(true);
  });

  it('410 Gone ends the retries for that hook and records the final failure', async () => {
    timed('/gone', (_req, res) => res.writeHead(410).end());
    timed('/ok', (_req, res) => res.writeHead(200).end());
    const { registry, dispatcher, records, settled } = await boot();
    registry.register('op-1', [hook('gone', '/gone'), hook('sibling', '/ok')]);
    await dispatcher.dispatch('onComplete', event);

    await eventually(() => records.some((r) => r.hookId === 'gone' && r.outcome === 'error'), 'the final failure');
    await settled(); // both jobs are over: no further attempt can come
    expect(requestsTo('/gone')).toHaveLength(1);
    expect(requestsTo('/ok')).toHaveLength(1);
    expect(records.filter((r) => r.outcome === 'error')).toEqual([
      expect.objectContaining({ operationId: 'op-1', point: 'onComplete', hookId: 'gone', source: 'caller', outcome: 'error', errorCode: 'http_error' }),
    ]);
  });

  it("the final failure after the last attempt is in the operation's timeline: an error outcome with its code, never the body", async () => {
    const secret = 'resolved-failing-secret-2e8d';
    process.env.QUEUE_HOOK_TOKEN = secret;
    timed('/down', (_req, res) => res.writeHead(503).end());
    const { registry, dispatcher, moduleRef, settled } = await boot({ timeline: true, tuning: { attempts: 3 } });
    const headers = { headers: { 'x-token': '${QUEUE_HOOK_TOKEN}' }, allowedEnvVars: ['QUEUE_HOOK_TOKEN'] };
    registry.register('op-1', [hook('q', '/down', { body: { marker: 'payload-marker-51c2' }, ...headers })]);
    await dispatcher.dispatch('onComplete', event);

    await eventually(() => requestsTo('/down').length === 3, 'three attempts');
    const stores = await moduleRef.get(RuntimeDatabase).stores();
    let rows: Awaited<ReturnType<typeof stores.outcomes.listByOperation>> = [];
    await eventually(async () => {
      await stores.timeline.flush();
      rows = await stores.outcomes.listByOperation('op-1');
      return rows.some((row) => row.outcome === 'error');
    }, 'the timeline row');
    expect(rows.filter((row) => row.outcome === 'error')).toEqual([
      expect.objectContaining({ operationId: 'op-1', point: 'onComplete', hookId: 'q', source: 'caller', outcome: 'error', errorCode: 'http_error' }),
    ]);
    expect(JSON.stringify(rows)).not.toContain('payload-marker-51c2');
    await settled(); // the job failed for good: no attempt can follow
    expect(requestsTo('/down')).toHaveLength(3); // bounded: attempts used up
    expect(requestsTo('/down').every((r) => r.headers['x-token'] === secret)).toBe(true);
    // The failed job kept for inspection (data, failedReason, stack trace) holds no resolved secret either.
    const stored = await dumpKeys(admin, prefix);
    expect(stored).toContain('HTTP 503');
    expect(stored).not.toContain(secret);
  });

  it("F1: the final failure of a tool point's queued delivery is a timeline row of its call, with the call's idempotency key", async () => {
    timed('/tool-down', (_req, res) => res.writeHead(503).end());
    const { registry, dispatcher, moduleRef } = await boot({ timeline: true, tuning: { attempts: 2 } });
    const operationId = randomUUID();
    registry.register(operationId, [{ id: 'tool-q', type: 'onToolCallError', webhook: { url: receiver.url('/tool-down'), delivery: 'queue', timeout: 5 } }]);
    await dispatcher.dispatch('onToolCallError', {
      ...event,
      type: 'onToolCallError',
      operationId,
      toolCallId: 'call-f1',
      identifier: 'pay',
      apiName: 'charge',
      error: { type: 'Boom', message: 'failed' },
    } as never);

    await eventually(() => requestsTo('/tool-down').length === 2, 'two attempts');
    const stores = await moduleRef.get(RuntimeDatabase).stores();
    let items: TimelineItemView[] = [];
    await eventually(async () => {
      await stores.timeline.flush();
      items = (await stores.outcomes.listByOperation(operationId)).map(timelineItemView);
      return items.some((item) => item.outcome === 'error');
    }, 'the timeline row');
    expect(items.filter((item) => item.outcome === 'error')).toEqual([
      expect.objectContaining({ point: 'onToolCallError', hookId: 'tool-q', errorCode: 'http_error', idempotencyKey: toolCallIdempotencyKey(operationId, 'call-f1') }),
    ]);
  });
});

describe('D3 enqueue failure and fallback', () => {
  it('D3: an enqueue that cannot reach Redis falls back to one direct post (same webhook-id scheme, signed)', async () => {
    timed('/direct', (_req, res) => res.writeHead(200).end());
    const { registry, dispatcher } = await boot({ redis: `redis://127.0.0.1:${await freePort()}`, worker: false });
    registry.register('op-1', [hook('q', '/direct')]);
    await dispatcher.dispatch('onComplete', event);

    expect(requestsTo('/direct')).toHaveLength(1);
    await eventually(() => requestsTo('/direct')[0]!.body.length > 0, 'the request body');
    expect(String(requestsTo('/direct')[0]!.headers['webhook-id'])).toMatch(/^msg_/);
    expect(verifies(requestsTo('/direct')[0]!)).toBe(true);
  });

  it("D2/D3: with fallback 'none' an unreachable Redis never posts directly and surfaces CriticalHookDeliveryError", async () => {
    timed('/direct', (_req, res) => res.writeHead(200).end());
    const { registry, dispatcher } = await boot({ redis: `redis://127.0.0.1:${await freePort()}`, worker: false });
    registry.register('op-1', [hook('q', '/direct', { fallback: 'none' }), { id: 'sibling', type: 'onComplete', webhook: { url: receiver.url('/direct') } }]);
    const error = await dispatcher.dispatch('onComplete', event).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(CriticalHookDeliveryError);
    expect((error as CriticalHookDeliveryError).failures).toEqual([{ point: 'onComplete', hookId: 'q', code: 'queue_unavailable' }]);
    // Only the sibling (a plain direct hook) reached the receiver.
    expect(requestsTo('/direct')).toHaveLength(1);
  });

  it("D3: Redis stopped after startup: the next enqueue fails fast and falls back; with fallback 'none' nothing is posted", async () => {
    const redis = await startPrivateRedis();
    try {
      timed('/direct', (_req, res) => res.writeHead(200).end());
      const { registry, dispatcher } = await boot({ redis: redis.url, worker: false });
      registry.register('op-1', [hook('q', '/direct')]);
      await dispatcher.dispatch('onComplete', event);
      expect(requestsTo('/direct')).toHaveLength(0); // queued (no worker in this test)

      await redis.stop();
      const started = Date.now();
      await dispatcher.dispatch('onComplete', event);
      expect(requestsTo('/direct')).toHaveLength(1);
      expect(Date.now() - started).toBeLessThan(10_000);

      registry.unregister('op-1');
      registry.register('op-2', [hook('none', '/direct', { fallback: 'none' })]);
      const error = await dispatcher.dispatch('onComplete', { ...event, operationId: 'op-2' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CriticalHookDeliveryError);
      expect(requestsTo('/direct')).toHaveLength(1);
    } finally {
      await harness?.close();
      harness = undefined;
      await redis.stop();
    }
  });

  it("D3: delivery 'queue' outside queue mode has no queue: one direct post (or CriticalHookDeliveryError with fallback 'none')", async () => {
    timed('/direct', (_req, res) => res.writeHead(200).end());
    const { registry, dispatcher } = await boot({ mode: 'local' });
    registry.register('op-1', [hook('q', '/direct'), hook('none', '/direct', { fallback: 'none' })]);
    const error = await dispatcher.dispatch('onComplete', event).catch((e: unknown) => e);
    expect(requestsTo('/direct')).toHaveLength(1);
    expect((error as CriticalHookDeliveryError).failures).toEqual([{ point: 'onComplete', hookId: 'none', code: 'configuration' }]);
  });
});
