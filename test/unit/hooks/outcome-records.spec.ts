/**
 * Outcome records (DESIGN §5 timeline, §7 `outcome: ok | mocked | allowed | denied | notification | error`):
 * one record per agent-family hook invocation, through the HOOK_OUTCOME_SINK port and `outcomes$`,
 * naming operation, point, hook and source with a latency, and never carrying a payload.
 */
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { ofOutcome, OnHook, type HookOutcomeRecord } from '../../../src/index.js';
import {
  afterEvent,
  beforeEvent,
  boot,
  captureLogs,
  deferred,
  deliveryError,
  envHook,
  RecordingDelivery,
  RecordingSink,
  stepEvent,
  TestEnvironment,
  type Booted,
} from './agent-test-kit.js';
import { pause } from '../../support/eventually.js';

const ALLOWED_KEYS = ['operationId', 'point', 'hookId', 'source', 'outcome', 'errorCode', 'latencyMs', 'transport'];
const SECRET_ARG = 'super-secret-argument-value';

let booted: Booted;
let sink: RecordingSink;
let delivery: RecordingDelivery;
let environment: TestEnvironment;

@Injectable()
class DecoratorObserver {
  @OnHook('afterStep', { id: 'decorator-observer' })
  observe() {}
}

function expectWellFormed(record: HookOutcomeRecord): void {
  for (const key of Object.keys(record)) expect(ALLOWED_KEYS).toContain(key);
  expect(record).not.toHaveProperty('payload');
  expect(record).not.toHaveProperty('event');
  expect(record).not.toHaveProperty('result');
  expect(typeof record.latencyMs).toBe('number');
  expect(Number.isFinite(record.latencyMs)).toBe(true);
  expect(record.latencyMs).toBeGreaterThanOrEqual(0);
  expect(JSON.stringify(record)).not.toContain(SECRET_ARG);
}

function only(hookId: string): HookOutcomeRecord {
  const records = sink.forHook(hookId);
  expect(records).toHaveLength(1);
  expectWellFormed(records[0]!);
  return records[0]!;
}

beforeEach(async () => {
  captureLogs();
  sink = new RecordingSink();
  delivery = new RecordingDelivery();
  environment = new TestEnvironment();
  booted = await boot({ sink, delivery, environment, providers: [DecoratorObserver] });
});

afterEach(async () => {
  await booted.moduleRef.close();
  jest.restoreAllMocks();
});

describe('DESIGN §5/§7 timeline: one outcome record per hook invocation; S1: never a payload', () => {
  it('§7 timeline outcome ok: an observe handler and a delivered notification webhook, with source decorator / caller / environment', async () => {
    booted.registry.register('op-1', [
      { id: 'caller-observer', type: 'afterStep', handler: () => undefined },
      { id: 'caller-webhook', type: 'afterStep', webhook: { url: 'https://hooks.example.com/n' } },
    ]);
    environment.hooks = [envHook({ id: 'env-observer', point: 'afterStep', handler: () => undefined })];

    await booted.dispatcher.dispatch('afterStep', stepEvent('op-1'));

    expect(only('decorator-observer')).toMatchObject({ operationId: 'op-1', point: 'afterStep', hookId: 'decorator-observer', source: 'decorator', outcome: 'ok' });
    expect(only('caller-observer')).toMatchObject({ operationId: 'op-1', point: 'afterStep', source: 'caller', outcome: 'ok' });
    expect(only('caller-webhook')).toMatchObject({ operationId: 'op-1', point: 'afterStep', source: 'caller', outcome: 'ok' });
    expect(only('env-observer')).toMatchObject({ operationId: 'op-1', point: 'afterStep', source: 'environment', outcome: 'ok' });
    expect(sink.records.map((r) => r.hookId)).toEqual(['decorator-observer', 'caller-observer', 'caller-webhook', 'env-observer']);
    for (const record of sink.records) expect(record.errorCode).toBeUndefined();
  });

  it('§7 timeline outcome mocked: the handler whose mock was accepted (not the skipped ones)', async () => {
    booted.registry.register('op-1', [
      { id: 'mocker', type: 'beforeToolCall', handler: (e) => void e.mock({ content: 'x', success: true }) },
      { id: 'skipped', type: 'beforeToolCall', handler: () => undefined },
    ]);

    await booted.dispatcher.dispatchBeforeToolCall(beforeEvent({ operationId: 'op-1', args: { token: SECRET_ARG } }));

    expect(only('mocker')).toMatchObject({ operationId: 'op-1', point: 'beforeToolCall', source: 'caller', outcome: 'mocked' });
    expect(sink.forHook('skipped')).toEqual([]);
  });

  it('§7 timeline outcome allowed: a handler control and a webhook control answering allow', async () => {
    delivery.onControl('webhook-allow', () => ({ decision: 'allow' }));
    booted.registry.register('op-1', [
      { id: 'handler-allow', type: 'beforeToolCall', onError: 'block', handler: () => ({ decision: 'allow' }) },
      { id: 'webhook-allow', type: 'beforeToolCall', webhook: { url: 'https://hooks.example.com/c', responseHandling: 'toolCall' } },
    ]);

    await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1', args: { token: SECRET_ARG } }));

    expect(only('handler-allow')).toMatchObject({ operationId: 'op-1', point: 'beforeToolCall', source: 'caller', outcome: 'allowed' });
    expect(only('webhook-allow')).toMatchObject({ operationId: 'op-1', point: 'beforeToolCall', source: 'caller', outcome: 'allowed' });
  });

  it('§7 timeline outcome denied: an afterToolCall deny from an environment webhook control', async () => {
    delivery.onControl('env-deny', () => ({ decision: 'deny', reason: 'no' }));
    environment.hooks = [envHook({ id: 'env-deny', point: 'afterToolCall', webhook: { url: 'https://env.example.com/c', responseHandling: 'toolCall' } })];

    await booted.dispatcher.gateToolResult(afterEvent({ operationId: 'op-1', result: { content: SECRET_ARG, success: true } }));

    expect(only('env-deny')).toMatchObject({ operationId: 'op-1', point: 'afterToolCall', source: 'environment', outcome: 'denied' });
    expect(only('env-deny').errorCode).toBeUndefined();
  });

  it('§7 timeline outcome notification: a control returning no decision, a plain handler at the gate, a 204 webhook control', async () => {
    delivery.onControl('webhook-204', () => undefined);
    booted.registry.register('op-1', [
      { id: 'plain', type: 'beforeToolCall', handler: () => undefined },
      { id: 'control-foo', type: 'beforeToolCall', onError: 'block', handler: () => ({ foo: 1 }) },
      { id: 'webhook-204', type: 'beforeToolCall', webhook: { url: 'https://hooks.example.com/c', responseHandling: 'toolCall', onError: 'block' } },
    ]);

    await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1' }));

    for (const id of ['plain', 'control-foo', 'webhook-204']) {
      expect(only(id)).toMatchObject({ operationId: 'op-1', point: 'beforeToolCall', source: 'caller', outcome: 'notification' });
    }
  });

  it('§7 timeline outcome error: thrown errors, timeouts, invalid decisions and delivery failures carry an errorCode', async () => {
    const never = deferred<unknown>();
    delivery.onControl('webhook-http', () => {
      throw deliveryError('http_error');
    });
    delivery.onNotify('notify-fail', () => {
      throw deliveryError('network_error');
    });
    booted.registry.register('op-1', [
      { id: 'throws-coded', type: 'afterToolCall', onError: 'continue', handler: () => Promise.reject(Object.assign(new Error('x'), { code: 'E_POLICY' })) },
      { id: 'throws-plain', type: 'afterToolCall', onError: 'continue', handler: () => Promise.reject(new Error('y')) },
      { id: 'times-out', type: 'afterToolCall', onError: 'continue', timeoutMs: 10, handler: () => never.promise },
      { id: 'invalid', type: 'afterToolCall', onError: 'continue', handler: () => ({ decision: 'maybe' }) },
      { id: 'webhook-http', type: 'afterToolCall', webhook: { url: 'https://hooks.example.com/c', responseHandling: 'toolCall' } },
      { id: 'notify-fail', type: 'afterToolCall', webhook: { url: 'https://hooks.example.com/n' } },
    ]);

    await booted.dispatcher.gateToolResult(afterEvent({ operationId: 'op-1' }));
    never.resolve(undefined);

    expect(only('throws-coded')).toMatchObject({ operationId: 'op-1', point: 'afterToolCall', source: 'caller', outcome: 'error', errorCode: 'E_POLICY' });
    expect(only('throws-plain')).toMatchObject({ outcome: 'error', errorCode: 'handler_error' });
    expect(only('times-out')).toMatchObject({ outcome: 'error', errorCode: 'timeout' });
    expect(only('invalid')).toMatchObject({ outcome: 'error', errorCode: 'invalid_response' });
    expect(only('webhook-http')).toMatchObject({ outcome: 'error', errorCode: 'http_error' });
    expect(only('notify-fail')).toMatchObject({ outcome: 'error', errorCode: 'network_error' });
  });

  it('§7 timeline outcome error: a cancelled webhook control is recorded with errorCode cancelled', async () => {
    booted.registry.register('op-1', [{ id: 'ctl', type: 'beforeToolCall', webhook: { url: 'https://hooks.example.com/c', responseHandling: 'toolCall' } }]);
    const controller = new AbortController();
    controller.abort();

    await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1' }), { signal: controller.signal });

    expect(only('ctl')).toMatchObject({ outcome: 'error', errorCode: 'cancelled', point: 'beforeToolCall' });
  });

  it('§7 timeline: latencyMs measures the invocation (a 30 ms handler is not recorded as instant)', async () => {
    booted.registry.register('op-1', [{ id: 'slow', type: 'afterStep', handler: () => pause(30, 'a slow handler') }]);

    await booted.dispatcher.dispatch('afterStep', stepEvent('op-1'));

    expect(only('slow').latencyMs).toBeGreaterThanOrEqual(20);
  });

  it('§7 timeline: hooks that are not invoked leave no record (matcher mismatch, later controls after a deny)', async () => {
    booted.registry.register('op-1', [
      { id: 'web-only', type: 'beforeToolCall', matcher: '^web/', onError: 'block', handler: () => ({ decision: 'deny' }) },
      { id: 'denies', type: 'beforeToolCall', onError: 'block', handler: () => ({ decision: 'deny' }) },
      { id: 'not-asked', type: 'beforeToolCall', onError: 'block', handler: () => ({ decision: 'allow' }) },
    ]);

    await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1', identifier: 'fs', apiName: 'readFile' }));

    expect(sink.records.map((r) => [r.hookId, r.outcome])).toEqual([['denies', 'denied']]);
  });

  it('§7 timeline: outcomes$ emits the same records as the sink, and ofOutcome filters them', async () => {
    const all: HookOutcomeRecord[] = [];
    const errors: HookOutcomeRecord[] = [];
    const s1 = booted.dispatcher.outcomes$.subscribe((r) => all.push(r));
    const s2 = booted.dispatcher.outcomes$.pipe(ofOutcome('error')).subscribe((r) => errors.push(r));
    booted.registry.register('op-1', [
      { id: 'ok', type: 'afterStep', handler: () => undefined },
      {
        id: 'boom',
        type: 'afterStep',
        handler: () => {
          throw new Error('x');
        },
      },
    ]);

    await booted.dispatcher.dispatch('afterStep', stepEvent('op-1'));
    s1.unsubscribe();
    s2.unsubscribe();

    expect(all).toEqual(sink.records);
    expect(errors.map((r) => r.hookId)).toEqual(['boom']);
  });

  it('§7 timeline: a sink that throws never breaks dispatch', async () => {
    const failingSink = {
      record: () => {
        throw new Error('disk full');
      },
    };
    const app = await boot({ sink: failingSink });
    try {
      const handler = jest.fn(() => ({ decision: 'deny', reason: 'still decided' }));
      app.registry.register('op-1', [{ id: 'deny', type: 'beforeToolCall', onError: 'block', handler }]);
      const gate = await app.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1' }));
      expect(gate.verdict).toMatchObject({ outcome: 'denied', reason: 'still decided' });
      expect(handler).toHaveBeenCalledTimes(1);
    } finally {
      await app.moduleRef.close();
    }
  });
});
