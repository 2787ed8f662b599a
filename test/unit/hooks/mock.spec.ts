/**
 * M1 / M2: local mocking through `dispatchBeforeToolCall()` and the `beforeToolCall` gate, and the rule that
 * observation payloads (Observable, event-emitter bridge, webhook requests) carry no callbacks.
 */
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import {
  ofPoint,
  OnHook,
  type AgentHook,
  type BeforeToolCallEvent,
  type DispatchedEvent,
  type ToolResult,
} from '../../../src/index.js';
import { beforeEvent, boot, captureLogs, envHook, RecordingDelivery, TestEnvironment, type Booted } from './agent-test-kit.js';
import { pause } from '../../support/eventually.js';

function mockHook(id: string, result: unknown, calls: string[]): AgentHook {
  return {
    id,
    type: 'beforeToolCall',
    handler: (event) => {
      calls.push(id);
      event.mock(result as ToolResult);
    },
  };
}

function observer(id: string, calls: string[]): AgentHook {
  return { id, type: 'beforeToolCall', handler: () => void calls.push(id) };
}

/** Every function-valued property, at any depth. */
function functionPaths(value: unknown, path = '$', seen = new Set<unknown>()): string[] {
  if (typeof value === 'function') return [path];
  if (value === null || typeof value !== 'object' || seen.has(value)) return [];
  seen.add(value);
  return Object.entries(value).flatMap(([key, child]) => functionPaths(child, `${path}.${key}`, seen));
}

describe('M1 local mocking (dispatchBeforeToolCall)', () => {
  let booted: Booted;
  let calls: string[];

  beforeEach(async () => {
    calls = [];
    captureLogs();
    booted = await boot();
  });

  afterEach(async () => {
    await booted.moduleRef.close();
    jest.restoreAllMocks();
  });

  it('M1: the first accepted mock wins, the remaining mock handlers are not called, and it returns { isMocked: true, result }', async () => {
    booted.registry.register('op-1', [
      observer('before', calls),
      mockHook('first', { content: '{"items":[]}', success: true }, calls),
      mockHook('second', { content: 'second', success: true }, calls),
      observer('after', calls),
    ]);

    const outcome = await booted.dispatcher.dispatchBeforeToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(outcome).toEqual({ isMocked: true, result: { content: '{"items":[]}', success: true } });
    expect(calls).toEqual(['before', 'first']);
  });

  it('M1: mock() answers true when accepted and false for a second mock in the same handler (the first stays)', async () => {
    const answers: boolean[] = [];
    booted.registry.register('op-1', [
      {
        id: 'twice',
        type: 'beforeToolCall',
        handler: (e) => {
          answers.push(e.mock({ content: 'one', success: true }));
          answers.push(e.mock({ content: 'two', success: false }));
        },
      },
    ]);

    const outcome = await booted.dispatcher.dispatchBeforeToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(answers).toEqual([true, false]);
    expect(outcome).toEqual({ isMocked: true, result: { content: 'one', success: true } });
  });

  it('M1: without a mock it returns null and every handler ran in order (the tool runs)', async () => {
    booted.registry.register('op-1', [observer('h1', calls), observer('h2', calls), observer('h3', calls)]);

    const outcome = await booted.dispatcher.dispatchBeforeToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(outcome).toBeNull();
    expect(calls).toEqual(['h1', 'h2', 'h3']);
  });

  it('M1: with no beforeToolCall hooks at all it returns null', async () => {
    booted.registry.register('op-1', [{ id: 'other-point', type: 'afterToolCall', handler: () => void calls.push('x') }]);

    await expect(booted.dispatcher.dispatchBeforeToolCall(beforeEvent({ operationId: 'op-1' }))).resolves.toBeNull();
    expect(calls).toEqual([]);
  });

  it('M1: a mock() call after the handler returned is rejected (false) and does not mock the call', async () => {
    let kept: BeforeToolCallEvent['mock'] | undefined;
    booted.registry.register('op-1', [
      {
        id: 'late',
        type: 'beforeToolCall',
        handler: (event) => {
          kept = event.mock;
        },
      },
    ]);

    const outcome = await booted.dispatcher.dispatchBeforeToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(outcome).toBeNull();
    expect(kept).toBeDefined();
    expect(kept!({ content: 'too late', success: true })).toBe(false);
    // A later dispatch is not affected by the stale callback either.
    await expect(booted.dispatcher.dispatchBeforeToolCall(beforeEvent({ operationId: 'op-1' }))).resolves.toBeNull();
  });

  it('M1: a rejected late mock does not block the next handler from mocking', async () => {
    let kept: BeforeToolCallEvent['mock'] | undefined;
    let lateAnswer: boolean | undefined;
    booted.registry.register('op-1', [
      {
        id: 'keeps-callback',
        type: 'beforeToolCall',
        handler: (event) => {
          kept = event.mock;
        },
      },
      {
        id: 'next',
        type: 'beforeToolCall',
        handler: (event) => {
          lateAnswer = kept!({ content: 'from the previous handler', success: true });
          event.mock({ content: 'next wins', success: true });
        },
      },
    ]);

    const outcome = await booted.dispatcher.dispatchBeforeToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(lateAnswer).toBe(false);
    expect(outcome).toEqual({ isMocked: true, result: { content: 'next wins', success: true } });
  });

  it('M1: an async handler may mock after an await, before its promise settles', async () => {
    booted.registry.register('op-1', [
      {
        id: 'async-mock',
        type: 'beforeToolCall',
        handler: async (event) => {
          await pause(5, 'a mock decided asynchronously');
          event.mock({ content: 'async', success: true });
        },
      },
      observer('skipped', calls),
    ]);

    const outcome = await booted.dispatcher.dispatchBeforeToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(outcome).toEqual({ isMocked: true, result: { content: 'async', success: true } });
    expect(calls).toEqual([]);
  });

  it.each<[string, unknown]>([
    ['no content', { success: true }],
    ['numeric content', { content: 42, success: true }],
    ['null', null],
    ['a string', 'plain text'],
    ['undefined', undefined],
  ])('M1: an invalid mock (%s) is not accepted and the next handler may still mock', async (_label, invalid) => {
    const answers: boolean[] = [];
    booted.registry.register('op-1', [
      {
        id: 'invalid',
        type: 'beforeToolCall',
        handler: (event) => void answers.push(event.mock(invalid as ToolResult)),
      },
      observer('observer', calls),
      mockHook('valid', { content: 'ok', success: true }, calls),
    ]);

    const outcome = await booted.dispatcher.dispatchBeforeToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(answers).toEqual([false]);
    expect(calls).toEqual(['observer', 'valid']);
    expect(outcome).toEqual({ isMocked: true, result: { content: 'ok', success: true } });
  });

  it('M1: an only-invalid mock leaves the call unmocked (null)', async () => {
    booted.registry.register('op-1', [mockHook('invalid', { success: true }, calls)]);
    await expect(booted.dispatcher.dispatchBeforeToolCall(beforeEvent({ operationId: 'op-1' }))).resolves.toBeNull();
  });

  it('M1: a mock handler whose matcher does not match the tool is not offered the call', async () => {
    booted.registry.register('op-1', [
      { ...mockHook('web-only', { content: 'web', success: true }, calls), matcher: '^web/' },
      mockHook('any', { content: 'any', success: true }, calls),
    ]);

    const outcome = await booted.dispatcher.dispatchBeforeToolCall(beforeEvent({ operationId: 'op-1', identifier: 'fs', apiName: 'readFile' }));

    expect(calls).toEqual(['any']);
    expect(outcome?.result.content).toBe('any');
  });

  it('M1: a handler that throws before mocking does not stop the next handler from mocking (D1)', async () => {
    booted.registry.register('op-1', [
      {
        id: 'throws',
        type: 'beforeToolCall',
        handler: () => {
          throw new Error('boom');
        },
      },
      mockHook('mocks', { content: 'after throw', success: true }, calls),
    ]);

    const outcome = await booted.dispatcher.dispatchBeforeToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(outcome).toEqual({ isMocked: true, result: { content: 'after throw', success: true } });
  });

  it('M1: a handler that mocks and then throws: the accepted mock stands', async () => {
    booted.registry.register('op-1', [
      {
        id: 'mock-then-throw',
        type: 'beforeToolCall',
        handler: (event) => {
          event.mock({ content: 'kept', success: true });
          throw new Error('after mock');
        },
      },
      observer('skipped', calls),
    ]);

    const outcome = await booted.dispatcher.dispatchBeforeToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(outcome).toEqual({ isMocked: true, result: { content: 'kept', success: true } });
    expect(calls).toEqual([]);
  });

  it('M1: handlers receive the tool context and a fresh mock() per dispatch; the caller’s event is not given a callback', async () => {
    const seen: BeforeToolCallEvent[] = [];
    booted.registry.register('op-1', [{ id: 'spy', type: 'beforeToolCall', handler: (event) => void seen.push(event) }]);
    const event = beforeEvent({ operationId: 'op-1', identifier: 'db', apiName: 'query', args: { sql: 'select 1' } });

    await booted.dispatcher.dispatchBeforeToolCall(event);

    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ identifier: 'db', apiName: 'query', args: { sql: 'select 1' }, operationId: 'op-1', toolCallId: event.toolCallId });
    expect(typeof seen[0]!.mock).toBe('function');
    expect('mock' in event).toBe(false);
  });

  it('M1: the gate returns the mock with the verdict; the first mock still short-circuits remaining mock handlers', async () => {
    booted.registry.register('op-1', [mockHook('m1', { content: 'mocked', success: true }, calls), mockHook('m2', { content: 'other', success: true }, calls)]);

    const gate = await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(gate).toEqual({ mock: { isMocked: true, result: { content: 'mocked', success: true } }, verdict: { outcome: 'allowed' } });
    expect(calls).toEqual(['m1']);
  });
});

describe('M2 dispatchBeforeToolCall sends no webhooks', () => {
  let booted: Booted;
  let delivery: RecordingDelivery;
  let environment: TestEnvironment;
  let calls: string[];

  beforeEach(async () => {
    calls = [];
    captureLogs();
    delivery = new RecordingDelivery().onControl('ctl', () => ({ decision: 'deny', reason: 'webhook' }));
    environment = new TestEnvironment();
    environment.hooks = [
      envHook({ id: 'env-notify', point: 'beforeToolCall', webhook: { url: 'https://env.example.com/n' } }),
      envHook({ id: 'env-control', point: 'beforeToolCall', webhook: { url: 'https://env.example.com/c', responseHandling: 'toolCall' } }),
    ];
    booted = await boot({ delivery, environment });
    booted.registry.register('op-1', [
      { id: 'notify', type: 'beforeToolCall', webhook: { url: 'https://hooks.example.com/n' } },
      { id: 'ctl', type: 'beforeToolCall', webhook: { url: 'https://hooks.example.com/c', responseHandling: 'toolCall' } },
      {
        id: 'both',
        type: 'beforeToolCall',
        handler: () => void calls.push('both:handler'),
        webhook: { url: 'https://hooks.example.com/both', responseHandling: 'toolCall' },
      },
    ]);
  });

  afterEach(async () => {
    await booted.moduleRef.close();
    jest.restoreAllMocks();
  });

  it('M2: neither notify nor control is called, with or without a mock; a hook with handler and webhook runs its handler (W2)', async () => {
    await expect(booted.dispatcher.dispatchBeforeToolCall(beforeEvent({ operationId: 'op-1' }))).resolves.toBeNull();
    expect(calls).toEqual(['both:handler']);

    booted.registry.register('op-1', [mockHook('mock', { content: 'x', success: true }, calls)]);
    const outcome = await booted.dispatcher.dispatchBeforeToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(outcome).toEqual({ isMocked: true, result: { content: 'x', success: true } });
    expect(delivery.notified).toEqual([]);
    expect(delivery.controlled).toEqual([]);
    expect(delivery.calls).toEqual([]);
  });

  it('M2: the gate (unlike dispatchBeforeToolCall) does deliver the webhooks, proving the recording port is wired', async () => {
    const gate = await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(delivery.calls).toEqual(['notify:notify', 'control:ctl', 'notify:env-notify']);
    expect(gate.verdict).toMatchObject({ outcome: 'denied', hookId: 'ctl', reason: 'webhook' });
  });

  it('M2: webhook requests built by the gate carry no callbacks, even after a handler mocked the call', async () => {
    booted.registry.register('op-1', [mockHook('mock', { content: 'x', success: true }, calls)]);

    await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1' }));

    const requests = [...delivery.notified, ...delivery.controlled];
    expect(requests.length).toBeGreaterThanOrEqual(2);
    for (const request of requests) {
      expect('mock' in request.event).toBe(false);
      expect(functionPaths(request.event)).toEqual([]);
    }
  });
});

const bridged: unknown[] = [];

@Injectable()
class BridgeObserver {
  @OnEvent('agent-hooks.beforeToolCall')
  onBefore(payload: unknown) {
    bridged.push(payload);
  }
}

@Injectable()
class AppMocker {
  received: BeforeToolCallEvent[] = [];
  @OnHook('beforeToolCall')
  maybeMock(event: BeforeToolCallEvent) {
    this.received.push(event);
    event.mock({ content: '{"items":[]}', success: true });
  }
}

describe('M2 observation payloads carry no callbacks', () => {
  let booted: Booted;

  beforeEach(async () => {
    bridged.length = 0;
    captureLogs();
    booted = await boot({ imports: [EventEmitterModule.forRoot()], providers: [BridgeObserver, AppMocker] });
  });

  afterEach(async () => {
    await booted.moduleRef.close();
    jest.restoreAllMocks();
  });

  it('M2: Observable observers (ofPoint) get the beforeToolCall event of gateToolCall without mock(), while the handler had one', async () => {
    const observed: DispatchedEvent<'beforeToolCall'>[] = [];
    const subscription = booted.dispatcher.pipe(ofPoint('beforeToolCall')).subscribe((event) => observed.push(event));

    const event = beforeEvent({ operationId: 'op-1' });
    const gate = await booted.dispatcher.gateToolCall(event);
    subscription.unsubscribe();

    expect(gate.mock).toEqual({ isMocked: true, result: { content: '{"items":[]}', success: true } });
    expect(typeof booted.moduleRef.get(AppMocker).received[0]!.mock).toBe('function');
    expect(observed).toHaveLength(1);
    expect(observed[0]!.point).toBe('beforeToolCall');
    expect(observed[0]!.operationId).toBe('op-1');
    expect(observed[0]!.payload).toMatchObject({ toolCallId: event.toolCallId, identifier: 'fs', apiName: 'readFile' });
    expect('mock' in observed[0]!.payload).toBe(false);
    expect(functionPaths(observed[0])).toEqual([]);
  });

  it('M2: the @nestjs/event-emitter bridge (agent-hooks.beforeToolCall) carries no mock() for gateToolCall', async () => {
    const event = beforeEvent({ operationId: 'op-1' });

    await booted.dispatcher.gateToolCall(event);

    expect(booted.moduleRef.get(AppMocker).received).toHaveLength(1);
    expect(bridged).toHaveLength(1);
    expect(bridged[0]).toMatchObject({ toolCallId: event.toolCallId, operationId: 'op-1' });
    expect('mock' in (bridged[0] as object)).toBe(false);
    expect(functionPaths(bridged[0])).toEqual([]);
  });

  it('M2: an observer of the observe-only dispatch of beforeToolCall also sees no callback', async () => {
    const observed: DispatchedEvent<'beforeToolCall'>[] = [];
    const subscription = booted.dispatcher.pipe(ofPoint('beforeToolCall')).subscribe((e) => observed.push(e));

    await booted.dispatcher.dispatch('beforeToolCall', beforeEvent({ operationId: 'op-1' }) as BeforeToolCallEvent);
    subscription.unsubscribe();

    expect(observed).toHaveLength(1);
    expect(functionPaths(observed[0])).toEqual([]);
    expect(functionPaths(bridged)).toEqual([]);
    expect(bridged).toHaveLength(1);
  });
});
