/**
 * SPEC O2 for the deliveries that leave the dispatching process: a queued (BullMQ) and a QStash
 * notification carry the W3C trace context of the work that dispatched it — stored with the job (no
 * secret in it), sent as `traceparent` on every attempt by the delivery worker; forwarded by QStash as
 * `Upstash-Forward-traceparent`, so the receiver sees it as `traceparent`.
 */
import { trace } from '@opentelemetry/api';
import { Redis } from 'ioredis';
import type { AgentHook } from '../../../src/hooks/agent-hook.js';
import { startReceiver, type LoopbackReceiver } from '../../unit/webhooks/loopback-receiver.js';
import { installTestSdk, traceIdOf, type TestSdk } from '../tracing/otel-test-sdk.js';
import { bootDelivery, type DeliveryHarness } from './delivery-harness.js';
import { eventually } from '../../support/eventually.js';
import { startQStashEmulator, type QStashEmulator } from './qstash-emulator.js';
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from './redis-fixtures.js';

const event = { id: 'e', type: 'onComplete', operationId: 'op-1', agentId: 'a', stepIndex: 0, timestamp: '', reason: 'done' } as const;

let sdk: TestSdk;
let receiver: LoopbackReceiver;
let harness: DeliveryHarness | undefined;

beforeAll(async () => {
  sdk = installTestSdk();
  receiver = await startReceiver({ '/hook': (_req, res) => res.writeHead(204).end() });
});

afterAll(async () => {
  await receiver.close();
  await sdk.shutdown();
});

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  receiver.requests.length = 0;
});

/** Dispatches under a caller span; resolves with that span's trace id. */
async function dispatchTraced(h: DeliveryHarness): Promise<string> {
  return trace.getTracer('test').startActiveSpan('caller', async (span) => {
    try {
      await h.dispatcher.dispatch('onComplete', event);
      return span.spanContext().traceId;
    } finally {
      span.end();
    }
  });
}

function hook(delivery: 'queue' | 'qstash'): AgentHook {
  return { id: 'traced', type: 'onComplete', webhook: { url: receiver.url('/hook'), delivery, timeout: 5 } };
}

describe('O2: queued and QStash deliveries carry the dispatching trace context', () => {
  it('O2: a BullMQ delivery posts traceparent of the dispatching trace', async () => {
    const prefix = uniquePrefix();
    const admin = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      harness = await bootDelivery({ redis: SHARED_REDIS_URL, tuning: { prefix, attempts: 2, backoffDelayMs: 50, maxBackoffDelayMs: 100, enqueueTimeoutMs: 1_000, concurrency: 2 } });
      harness.registry.register('op-1', [hook('queue')]);
      const traceId = await dispatchTraced(harness);
      await eventually(() => receiver.requests.some((r) => r.path === '/hook'), 'the queued delivery');
      const request = receiver.requests.find((r) => r.path === '/hook')!;
      expect(traceIdOf(String(request.headers.traceparent))).toBe(traceId);
    } finally {
      await harness?.close();
      harness = undefined;
      await deleteKeys(admin, prefix);
      admin.disconnect();
    }
  });

  it('O2: a QStash delivery forwards traceparent of the dispatching trace', async () => {
    const qstash: QStashEmulator = await startQStashEmulator();
    process.env.QSTASH_TOKEN = qstash.token;
    process.env.QSTASH_URL = qstash.url;
    try {
      harness = await bootDelivery({ mode: 'local', tuning: {} });
      harness.registry.register('op-1', [hook('qstash')]);
      const traceId = await dispatchTraced(harness);
      await eventually(() => receiver.requests.some((r) => r.path === '/hook'), 'the forwarded message');
      await qstash.settled();
      const request = receiver.requests.find((r) => r.path === '/hook')!;
      expect(traceIdOf(String(request.headers.traceparent))).toBe(traceId);
    } finally {
      delete process.env.QSTASH_TOKEN;
      delete process.env.QSTASH_URL;
      await qstash.close();
    }
  });
});
