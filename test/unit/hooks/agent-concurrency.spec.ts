/**
 * A1 (hooks are stored and dispatched per operation): concurrent operations do not block each other.
 * A slow hook on operation A never delays operation B, and neither sees the other's hooks or verdicts.
 */
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { type HookDecision } from '../../../src/index.js';
import { afterEvent, beforeEvent, boot, captureLogs, deferred, RecordingDelivery, stepEvent, type Booted } from './agent-test-kit.js';
import { pause } from '../../support/eventually.js';

let booted: Booted;
let delivery: RecordingDelivery;

beforeEach(async () => {
  captureLogs();
  delivery = new RecordingDelivery();
  booted = await boot({ delivery });
});

afterEach(async () => {
  await booted.moduleRef.close();
  jest.restoreAllMocks();
});

/** Tracks whether a promise has settled, without awaiting it. */
function track<T>(promise: Promise<T>): { settled: () => boolean; promise: Promise<T> } {
  let done = false;
  const tracked = promise.finally(() => {
    done = true;
  });
  return { settled: () => done, promise: tracked };
}

describe('A1 per-operation dispatch: concurrent operations do not block each other', () => {
  it('A1: a slow observe hook on operation A does not delay operation B', async () => {
    const gate = deferred();
    const order: string[] = [];
    booted.registry.register('op-A', [
      {
        id: 'slow-A',
        type: 'afterStep',
        handler: async () => {
          order.push('A:start');
          await gate.promise;
          order.push('A:end');
        },
      },
    ]);
    booted.registry.register('op-B', [{ id: 'fast-B', type: 'afterStep', handler: () => void order.push('B') }]);

    const a = track(booted.dispatcher.dispatch('afterStep', stepEvent('op-A')));
    await booted.dispatcher.dispatch('afterStep', stepEvent('op-B'));

    expect(a.settled()).toBe(false);
    expect(order).toEqual(['A:start', 'B']);

    gate.resolve();
    await a.promise;
    expect(order).toEqual(['A:start', 'B', 'A:end']);
  });

  it('A1: a slow control on A does not delay B’s gate, and B’s deny does not leak into A’s verdict', async () => {
    const slow = deferred<HookDecision>();
    booted.registry.register('op-A', [{ id: 'slow-policy', type: 'beforeToolCall', onError: 'block', handler: () => slow.promise }]);
    booted.registry.register('op-B', [{ id: 'deny-B', type: 'beforeToolCall', onError: 'block', handler: () => ({ decision: 'deny', reason: 'B only' }) }]);

    const a = track(booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-A' })));
    const b = await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-B' }));

    expect(b.verdict).toMatchObject({ outcome: 'denied', hookId: 'deny-B', reason: 'B only' });
    expect(a.settled()).toBe(false);

    slow.resolve({ decision: 'allow' });
    await expect(a.promise).resolves.toEqual({ mock: null, verdict: { outcome: 'allowed' } });
  });

  it('A1: a slow webhook control on A does not delay B’s result control', async () => {
    const slow = deferred<unknown>();
    delivery.onControl('webhook-A', () => slow.promise);
    booted.registry.register('op-A', [{ id: 'webhook-A', type: 'afterToolCall', webhook: { url: 'https://hooks.example.com/a', responseHandling: 'toolCall' } }]);
    booted.registry.register('op-B', [{ id: 'observer-B', type: 'afterToolCall', handler: () => undefined }]);

    const a = track(booted.dispatcher.gateToolResult(afterEvent({ operationId: 'op-A' })));
    const b = await booted.dispatcher.gateToolResult(afterEvent({ operationId: 'op-B' }));

    expect(b).toEqual({ outcome: 'allowed' });
    expect(a.settled()).toBe(false);

    slow.resolve({ decision: 'deny', reason: 'A only' });
    await expect(a.promise).resolves.toMatchObject({ outcome: 'denied', hookId: 'webhook-A', reason: 'A only' });
  });

  it('A1: concurrent mocks stay with their own operation', async () => {
    const release = deferred();
    booted.registry.register('op-A', [
      {
        id: 'mock-A',
        type: 'beforeToolCall',
        handler: async (event) => {
          await release.promise;
          (event as { mock(r: unknown): boolean }).mock({ content: 'A', success: true });
        },
      },
    ]);
    booted.registry.register('op-B', [
      { id: 'mock-B', type: 'beforeToolCall', handler: (event) => void (event as { mock(r: unknown): boolean }).mock({ content: 'B', success: true }) },
    ]);

    const a = track(booted.dispatcher.dispatchBeforeToolCall(beforeEvent({ operationId: 'op-A' })));
    const b = await booted.dispatcher.dispatchBeforeToolCall(beforeEvent({ operationId: 'op-B' }));
    expect(b?.result.content).toBe('B');
    expect(a.settled()).toBe(false);

    release.resolve();
    expect((await a.promise)?.result.content).toBe('A');
  });

  it('A1: many interleaved operations each see exactly their own hooks and sanitized results', async () => {
    const seen = new Map<string, string[]>();
    const ops = Array.from({ length: 20 }, (_, i) => `op-${i}`);
    for (const op of ops) {
      booted.registry.register(op, [
        {
          id: `deny-${op}`,
          type: 'afterToolCall',
          onError: 'block',
          handler: async () => {
            await pause(Math.floor(Math.random() * 5), 'handlers that finish in a random order');
            return { decision: 'deny', reason: `reason for ${op}` };
          },
        },
        { id: `observe-${op}`, type: 'afterToolCall', handler: (e) => void seen.set(op, [...(seen.get(op) ?? []), e.result.content]) },
      ]);
    }

    const verdicts = await Promise.all(ops.map((op) => booted.dispatcher.gateToolResult(afterEvent({ operationId: op }))));

    verdicts.forEach((verdict, i) => expect(verdict).toMatchObject({ outcome: 'denied', hookId: `deny-op-${i}`, reason: `reason for op-${i}` }));
    for (const op of ops) expect(seen.get(op)).toEqual([`reason for ${op}`]);
  });
});
