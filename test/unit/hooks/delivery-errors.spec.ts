/**
 * D1 / D2: agent-family handler and delivery errors are logged and dispatch goes on; `fallback: 'none'`
 * webhook failures are collected into one CriticalHookDeliveryError thrown after all sibling hooks ran.
 */
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import {
  CriticalHookDeliveryError,
  OnHook,
  type AfterStepEvent,
  type AgentHook,
  type AgentHookWebhook,
  type HookErrorEvent,
} from '../../../src/index.js';
import { afterEvent, beforeEvent, boot, captureLogs, deliveryError, envHook, RecordingDelivery, stepEvent, TestEnvironment, type Booted } from './agent-test-kit.js';
import { pause } from '../../support/eventually.js';

class PolicyStoreUnavailable extends Error {
  override readonly name = 'PolicyStoreUnavailable';
}

const SECRET_MESSAGE = 'token=sk-live-should-never-be-logged';

let booted: Booted;
let delivery: RecordingDelivery;
let environment: TestEnvironment;
let logs: ReturnType<typeof captureLogs>;
let errors: HookErrorEvent[];
let calls: string[];

function handler(id: string, type: AgentHook['type'] = 'afterStep'): AgentHook {
  return { id, type, handler: () => void calls.push(id) };
}

function failing(id: string, error: unknown, type: AgentHook['type'] = 'afterStep'): AgentHook {
  return {
    id,
    type,
    handler: () => {
      calls.push(id);
      throw error;
    },
  };
}

function webhook(id: string, extra: Partial<AgentHookWebhook> = {}, type: AgentHook['type'] = 'afterStep'): AgentHook {
  return { id, type, webhook: { url: `https://hooks.example.com/${id}`, ...extra } };
}

function loggedText(): string {
  return [...logs.warn.mock.calls, ...logs.error.mock.calls].map((args) => args.map(String).join(' ')).join('\n');
}

@Injectable()
class FailingDecorator {
  @OnHook('afterStep')
  explode(_event: AfterStepEvent) {
    calls.push('decorator');
    throw new PolicyStoreUnavailable(SECRET_MESSAGE);
  }
}

beforeEach(async () => {
  calls = [];
  errors = [];
  logs = captureLogs();
  delivery = new RecordingDelivery();
  environment = new TestEnvironment();
  booted = await boot({ delivery, environment, providers: [FailingDecorator] });
  booted.dispatcher.errors$.subscribe((event) => errors.push(event));
});

afterEach(async () => {
  await booted.moduleRef.close();
  jest.restoreAllMocks();
});

describe('D1 ordinary errors are logged and dispatch goes on', () => {
  it('D1: a throwing handler is logged, reported on errors$, and the next hooks still run', async () => {
    const boom = new Error(SECRET_MESSAGE);
    booted.registry.register('op-1', [failing('h1', boom), handler('h2')]);
    environment.hooks = [envHook({ id: 'env', point: 'afterStep', handler: () => void calls.push('env') })];

    await expect(booted.dispatcher.dispatch('afterStep', stepEvent('op-1'))).resolves.toBeUndefined();

    expect(calls).toEqual(['decorator', 'h1', 'h2', 'env']);
    expect(errors.map((e) => [e.point, e.hookId, e.operationId, e.errorType])).toEqual([
      ['afterStep', 'FailingDecorator.explode', 'op-1', 'PolicyStoreUnavailable'],
      ['afterStep', 'h1', 'op-1', 'Error'],
    ]);
    expect(errors[1]!.error).toBe(boom);
    const logged = loggedText();
    expect(logged).toContain('h1');
    expect(logged).toContain('FailingDecorator.explode');
    expect(logged).toContain('afterStep');
    expect(logged).toContain('PolicyStoreUnavailable');
  });

  it('D1: the log names point, hook and error type, never the error message', async () => {
    booted.registry.register('op-1', [failing('h1', new Error(SECRET_MESSAGE))]);

    await booted.dispatcher.dispatch('afterStep', stepEvent('op-1'));

    expect(logs.warn).toHaveBeenCalled();
    expect(loggedText()).not.toContain('sk-live');
  });

  it('D1: an async rejection and a thrown non-Error are handled the same way', async () => {
    booted.registry.register('op-1', [
      { id: 'rejects', type: 'afterStep', handler: () => Promise.reject(new TypeError('bad')) },
      failing('throws-string', 'just a string'),
      handler('last'),
    ]);

    await booted.dispatcher.dispatch('afterStep', stepEvent('op-1'));

    expect(calls).toEqual(['decorator', 'throws-string', 'last']);
    expect(errors.map((e) => [e.hookId, e.errorType])).toEqual([
      ['FailingDecorator.explode', 'PolicyStoreUnavailable'],
      ['rejects', 'TypeError'],
      ['throws-string', 'string'],
    ]);
  });

  it('D1: dispatch awaits each handler in turn (the next starts after the previous settled)', async () => {
    const events: string[] = [];
    booted.registry.register('op-1', [
      {
        id: 'slow',
        type: 'afterStep',
        handler: async () => {
          events.push('slow:start');
          await pause(10, 'a slow handler');
          events.push('slow:end');
          throw new Error('late failure');
        },
      },
      { id: 'next', type: 'afterStep', handler: () => void events.push('next') },
    ]);

    await booted.dispatcher.dispatch('afterStep', stepEvent('op-1'));

    expect(events).toEqual(['slow:start', 'slow:end', 'next']);
  });

  it('D1: a throwing handler at the beforeToolCall gate is logged and the gate goes on (allowed, next handler may mock)', async () => {
    booted.registry.register('op-1', [
      failing('throws', new Error('x'), 'beforeToolCall'),
      {
        id: 'mocks',
        type: 'beforeToolCall',
        handler: (event) => void (event as { mock(r: unknown): boolean }).mock({ content: 'ok', success: true }),
      },
    ]);

    const gate = await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(gate).toEqual({ mock: { isMocked: true, result: { content: 'ok', success: true } }, verdict: { outcome: 'allowed' } });
    expect(errors.map((e) => [e.point, e.hookId])).toEqual([['beforeToolCall', 'throws']]);
  });

  it('D1: a throwing plain handler at afterToolCall is logged; later hooks run and the result is allowed', async () => {
    booted.registry.register('op-1', [failing('throws', new Error('x'), 'afterToolCall'), handler('later', 'afterToolCall')]);

    await expect(booted.dispatcher.gateToolResult(afterEvent({ operationId: 'op-1' }))).resolves.toEqual({ outcome: 'allowed' });

    expect(calls).toEqual(['throws', 'later']);
    expect(errors.map((e) => [e.point, e.hookId])).toEqual([['afterToolCall', 'throws']]);
  });

  it('D1: a failed notification webhook (no fallback none) is logged, reported, and does not stop dispatch', async () => {
    delivery.onNotify('w1', () => {
      throw deliveryError('http_error');
    });
    booted.registry.register('op-1', [webhook('w1'), handler('after')]);

    await expect(booted.dispatcher.dispatch('afterStep', stepEvent('op-1'))).resolves.toBeUndefined();

    expect(calls).toEqual(['decorator', 'after']);
    expect(errors.map((e) => e.hookId)).toContain('w1');
    expect(loggedText()).toContain('w1');
  });

  it('D1: dispatch resolves even when every hook fails; each failure is reported on errors$', async () => {
    booted.registry.register('op-1', [failing('a', new Error('a')), failing('b', new Error('b'))]);
    await expect(booted.dispatcher.dispatch('afterStep', stepEvent('op-1'))).resolves.toBeUndefined();
    expect(errors).toHaveLength(3);
  });
});

describe('D2 fallback: none delivery failures are collected into one CriticalHookDeliveryError', () => {
  it('D2: failures are thrown once, after all sibling hooks ran, and listed in order', async () => {
    delivery.onNotify('critical-1', () => {
      throw deliveryError('http_error');
    });
    delivery.onNotify('ordinary', () => {
      throw deliveryError('timeout');
    });
    delivery.onNotify('critical-2', () => Promise.reject(new Error('socket hang up')));
    booted.registry.register('op-1', [
      webhook('critical-1', { delivery: 'queue', fallback: 'none' }),
      handler('sibling-1'),
      webhook('ordinary', { delivery: 'queue', fallback: 'fetch' }),
      webhook('critical-2', { delivery: 'qstash', fallback: 'none' }),
      handler('sibling-2'),
      webhook('ok-critical', { delivery: 'queue', fallback: 'none' }),
    ]);
    environment.hooks = [envHook({ id: 'env-last', point: 'afterStep', handler: () => void calls.push('env-last') })];

    const error = await booted.dispatcher.dispatch('afterStep', stepEvent('op-1')).then(
      () => undefined,
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(CriticalHookDeliveryError);
    const critical = error as CriticalHookDeliveryError;
    expect(critical.code).toBe('critical_hook_delivery');
    expect(critical.failures).toEqual([
      { point: 'afterStep', hookId: 'critical-1', code: 'http_error' },
      { point: 'afterStep', hookId: 'critical-2', code: 'network_error' },
    ]);
    expect(critical.message).toContain('critical-1');
    expect(critical.message).toContain('critical-2');
    // Every sibling after the first failure ran, up to the last (environment) hook.
    expect(calls).toEqual(['decorator', 'sibling-1', 'sibling-2', 'env-last']);
    expect(delivery.calls).toEqual(['notify:critical-1', 'notify:ordinary', 'notify:critical-2', 'notify:ok-critical']);
  });

  it('D2: failures without fallback none (fetch, or unset) do not throw', async () => {
    delivery.onNotify('fetch', () => {
      throw deliveryError('http_error');
    });
    delivery.onNotify('unset', () => {
      throw deliveryError('timeout');
    });
    delivery.onNotify('queue-default', () => {
      throw deliveryError('network_error');
    });
    booted.registry.register('op-1', [webhook('fetch', { fallback: 'fetch' }), webhook('unset'), webhook('queue-default', { delivery: 'queue' }), handler('after')]);

    await expect(booted.dispatcher.dispatch('afterStep', stepEvent('op-1'))).resolves.toBeUndefined();
    expect(calls).toContain('after');
    expect(errors.map((e) => e.hookId)).toEqual(expect.arrayContaining(['fetch', 'unset', 'queue-default']));
  });

  it('D2: a fallback none webhook that is delivered does not throw', async () => {
    booted.registry.register('op-1', [webhook('critical', { delivery: 'queue', fallback: 'none' })]);
    await expect(booted.dispatcher.dispatch('afterStep', stepEvent('op-1'))).resolves.toBeUndefined();
    expect(delivery.calls).toEqual(['notify:critical']);
  });

  it('D2: an environment webhook with fallback none that fails is collected as well', async () => {
    delivery.onNotify('env-critical', () => {
      throw deliveryError('http_error');
    });
    environment.hooks = [envHook({ id: 'env-critical', point: 'afterStep', webhook: { url: 'https://env.example.com/x', delivery: 'queue', fallback: 'none' } })];

    await expect(booted.dispatcher.dispatch('afterStep', stepEvent('op-1'))).rejects.toMatchObject({
      name: 'CriticalHookDeliveryError',
      failures: [{ point: 'afterStep', hookId: 'env-critical', code: 'http_error' }],
    });
  });

  it('D2: at the afterToolCall gate a critical failure is thrown after the later controls ran', async () => {
    delivery.onNotify('critical', () => {
      throw deliveryError('http_error');
    });
    const laterControl = jest.fn(() => ({ decision: 'deny', reason: 'still asked' }));
    booted.registry.register('op-1', [
      webhook('critical', { delivery: 'queue', fallback: 'none' }, 'afterToolCall'),
      { id: 'policy', type: 'afterToolCall', handler: laterControl, onError: 'block' },
      handler('observer', 'afterToolCall'),
    ]);

    await expect(booted.dispatcher.gateToolResult(afterEvent({ operationId: 'op-1' }))).rejects.toBeInstanceOf(CriticalHookDeliveryError);
    expect(laterControl).toHaveBeenCalledTimes(1);
    expect(calls).toEqual(['observer']);
  });

  it('D2: at the beforeToolCall gate a critical failure is thrown after mock handlers and controls ran', async () => {
    delivery.onNotify('critical', () => {
      throw deliveryError('timeout');
    });
    delivery.onControl('policy', () => ({ decision: 'allow' }));
    booted.registry.register('op-1', [
      webhook('critical', { delivery: 'queue', fallback: 'none' }, 'beforeToolCall'),
      handler('observer', 'beforeToolCall'),
      webhook('policy', { responseHandling: 'toolCall' }, 'beforeToolCall'),
    ]);

    await expect(booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1' }))).rejects.toMatchObject({
      failures: [{ point: 'beforeToolCall', hookId: 'critical', code: 'timeout' }],
    });
    expect(calls).toEqual(['observer']);
    expect(delivery.calls).toEqual(['notify:critical', 'control:policy']);
  });

  it('D2: with no delivery port at all, a fallback none webhook is a critical failure (never silently dropped)', async () => {
    const bare = await boot();
    try {
      bare.registry.register('op-1', [webhook('critical', { delivery: 'queue', fallback: 'none' }), webhook('plain')]);
      await expect(bare.dispatcher.dispatch('afterStep', stepEvent('op-1'))).rejects.toMatchObject({
        failures: [{ point: 'afterStep', hookId: 'critical', code: 'configuration' }],
      });
    } finally {
      await bare.moduleRef.close();
    }
  });
});
