/**
 * W8, W9, W11–W14 (and DESIGN §3 steps 2 and 6): allow/deny control of tool calls and tool results by
 * in-process handlers and by webhook controls (through the WEBHOOK_DELIVERY port), mocks under control,
 * control errors, cancellation, and the sanitized result after an afterToolCall deny.
 */
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import {
  OnHook,
  type AfterToolCallEvent,
  type AgentHook,
  type DispatchOptions,
  type HookDecision,
  type ToolControlPoint,
  type ToolVerdict,
} from '../../../src/index.js';
import { HOOK_CONTROL_ERROR } from '../../../src/hooks/tool-verdict.js';
import {
  afterEvent,
  beforeEvent,
  boot,
  captureLogs,
  deferred,
  deliveryError,
  envHook,
  ORIGINAL_RESULT,
  RecordingDelivery,
  TestEnvironment,
  type Booted,
} from './agent-test-kit.js';

const POINTS: ToolControlPoint[] = ['beforeToolCall', 'afterToolCall'];

async function verdictAt(booted: Booted, point: ToolControlPoint, options: DispatchOptions = {}, operationId = 'op-1'): Promise<ToolVerdict> {
  if (point === 'beforeToolCall') return (await booted.dispatcher.gateToolCall(beforeEvent({ operationId }), options)).verdict;
  return booted.dispatcher.gateToolResult(afterEvent({ operationId }), options);
}

function control(id: string, point: ToolControlPoint, returns: () => unknown, extra: Partial<AgentHook> = {}): AgentHook {
  return { id, type: point, handler: returns, ...extra } as AgentHook;
}

function denied(point: ToolControlPoint, hookId: string, reason: string): ToolVerdict {
  return { outcome: 'denied', phase: point, hookId, reason, error: 'hook_denied' };
}

function controlError(point: ToolControlPoint, hookId: string, errorCode: string): ToolVerdict {
  return { outcome: 'control_error', phase: point, hookId, reason: HOOK_CONTROL_ERROR, error: 'hook_control_error', errorCode };
}

const ALLOWED_VERDICT: ToolVerdict = { outcome: 'allowed' };

let booted: Booted;
let delivery: RecordingDelivery;
let environment: TestEnvironment;

beforeEach(async () => {
  captureLogs();
  delivery = new RecordingDelivery();
  environment = new TestEnvironment();
  booted = await boot({ delivery, environment });
});

afterEach(async () => {
  await booted.moduleRef.close();
  jest.restoreAllMocks();
});

describe.each(POINTS)('W14 in-process decisions at %s', (point) => {
  const defaultReason = `Blocked by ${point} hook.`;

  it(`W8/W9/W14: a handler returning { decision: 'deny', reason } denies with that reason (${point})`, async () => {
    booted.registry.register('op-1', [control('policy', point, () => ({ decision: 'deny', reason: 'no secrets' }))]);
    await expect(verdictAt(booted, point)).resolves.toEqual(denied(point, 'policy', 'no secrets'));
  });

  it(`W14: a deny from a handler registered as a control (onError: block) denies too (${point})`, async () => {
    booted.registry.register('op-1', [control('policy', point, async () => ({ decision: 'deny', reason: 'async no' }), { onError: 'block' })]);
    await expect(verdictAt(booted, point)).resolves.toEqual(denied(point, 'policy', 'async no'));
  });

  it.each<[string, unknown]>([
    ['without a reason', { decision: 'deny' }],
    ['with an empty reason', { decision: 'deny', reason: '' }],
    ['with a blank reason', { decision: 'deny', reason: '   ' }],
    ['with an undefined reason', { decision: 'deny', reason: undefined }],
  ])(`W8/W9: a deny %s uses "Blocked by ${point} hook." (${point})`, async (_label, returned) => {
    booted.registry.register('op-1', [control('policy', point, () => returned, { onError: 'continue' })]);
    await expect(verdictAt(booted, point)).resolves.toEqual(denied(point, 'policy', defaultReason));
  });

  it.each<[string, unknown]>([
    ['a number', 42],
    ['null', null],
    ['an object', { text: 'why' }],
  ])(`W12/W13: a deny whose reason is %s (not a string) is an invalid decision: allowed under continue, control_error under block (${point})`, async (_label, reason) => {
    booted.registry.register('op-1', [control('lenient', point, () => ({ decision: 'deny', reason }), { onError: 'continue' })]);
    booted.registry.register('op-2', [control('strict', point, () => ({ decision: 'deny', reason }), { onError: 'block' })]);

    await expect(verdictAt(booted, point, {}, 'op-1')).resolves.toEqual(ALLOWED_VERDICT);
    await expect(verdictAt(booted, point, {}, 'op-2')).resolves.toEqual(controlError(point, 'strict', 'invalid_response'));
  });

  it(`W8: an explicit allow is not final: a later deny still applies (${point})`, async () => {
    const later = jest.fn(() => ({ decision: 'deny', reason: 'second says no' }));
    booted.registry.register('op-1', [control('allows', point, () => ({ decision: 'allow' }), { onError: 'block' }), control('denies', point, later, { onError: 'block' })]);

    await expect(verdictAt(booted, point)).resolves.toEqual(denied(point, 'denies', 'second says no'));
    expect(later).toHaveBeenCalledTimes(1);
  });

  it(`W8: after a deny, later controls are not asked (${point})`, async () => {
    const later = jest.fn(() => ({ decision: 'allow' }));
    booted.registry.register('op-1', [
      control('denies', point, () => ({ decision: 'deny', reason: 'first' }), { onError: 'block' }),
      control('later', point, later, { onError: 'block' }),
      { id: 'later-webhook', type: point, webhook: { url: 'https://hooks.example.com/c', responseHandling: 'toolCall' } },
    ]);

    await expect(verdictAt(booted, point)).resolves.toEqual(denied(point, 'denies', 'first'));
    expect(later).not.toHaveBeenCalled();
    expect(delivery.controlled).toEqual([]);
  });

  it(`W14: with only allows and notifications the call/result is allowed (${point})`, async () => {
    booted.registry.register('op-1', [
      control('a', point, () => ({ decision: 'allow' }), { onError: 'block' }),
      control('b', point, () => undefined),
      control('c', point, () => ({ decision: 'allow' })),
    ]);
    await expect(verdictAt(booted, point)).resolves.toEqual(ALLOWED_VERDICT);
  });

  const notifications: Array<[string, unknown]> = [
    ['undefined', undefined],
    ['null', null],
    ['an empty array', []],
    ['an array holding a deny', [{ decision: 'deny', reason: 'nested' }]],
    ['a string scalar', 'deny'],
    ['a number scalar', 42],
    ['a boolean scalar', false],
    ['a legacy nested hookSpecificOutput', { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', decision: 'deny' } }],
    ['an object without decision', { foo: 1 }],
    ['an object with reason but no decision', { reason: 'looks like a deny' }],
  ];

  it.each(notifications)(
    `W11: a handler returning %s is a notification even with onError: block, and does not skip a later deny (${point})`,
    async (_label, returned) => {
      const later = jest.fn(() => ({ decision: 'deny', reason: 'later policy' }));
      booted.registry.register('op-1', [control('notifies', point, () => returned, { onError: 'block' }), control('later', point, later, { onError: 'continue' })]);

      await expect(verdictAt(booted, point)).resolves.toEqual(denied(point, 'later', 'later policy'));
      expect(later).toHaveBeenCalledTimes(1);
    },
  );

  it.each(notifications)(`W11: a handler returning %s alone (onError: block) allows (${point})`, async (_label, returned) => {
    booted.registry.register('op-1', [control('notifies', point, () => returned, { onError: 'block' })]);
    await expect(verdictAt(booted, point)).resolves.toEqual(ALLOWED_VERDICT);
  });

  it.each<[string, unknown]>([
    ['maybe', { decision: 'maybe' }],
    ['uppercase DENY', { decision: 'DENY', reason: 'case matters' }],
    ['null decision', { decision: null }],
    ['boolean decision', { decision: true }],
    ['object decision', { decision: { value: 'deny' } }],
  ])(`W12: an explicit invalid decision (%s) is a control error: allowed under continue, control_error under block (${point})`, async (_label, returned) => {
    booted.registry.register('op-1', [control('lenient', point, () => returned, { onError: 'continue' })]);
    await expect(verdictAt(booted, point)).resolves.toEqual(ALLOWED_VERDICT);

    booted.registry.register('op-2', [control('strict', point, () => returned, { onError: 'block' })]);
    const verdict = await verdictAt(booted, point, {}, 'op-2');
    expect(verdict).toMatchObject({ outcome: 'control_error', phase: point, hookId: 'strict', reason: 'hook_control_error', error: 'hook_control_error' });
  });

  it(`W12: an invalid decision under continue goes on to the next control (${point})`, async () => {
    const later = jest.fn(() => ({ decision: 'deny' }));
    booted.registry.register('op-1', [control('invalid', point, () => ({ decision: 'maybe' }), { onError: 'continue' }), control('later', point, later, { onError: 'continue' })]);

    await expect(verdictAt(booted, point)).resolves.toEqual(denied(point, 'later', defaultReason));
  });

  it(`W12: an invalid decision from a handler without onError is allowed (onError defaults to continue) (${point})`, async () => {
    booted.registry.register('op-1', [control('plain', point, () => ({ decision: 'maybe' }))]);
    await expect(verdictAt(booted, point)).resolves.toEqual(ALLOWED_VERDICT);
  });

  it(`W12: a thrown error under onError block is a control_error with the error's code (${point})`, async () => {
    booted.registry.register('op-1', [
      control(
        'throws',
        point,
        () => {
          throw Object.assign(new Error('policy store down'), { code: 'policy_unavailable' });
        },
        { onError: 'block' },
      ),
    ]);
    await expect(verdictAt(booted, point)).resolves.toEqual(controlError(point, 'throws', 'policy_unavailable'));
  });

  it(`W12: a rejected promise without a code under onError block is a control_error (${point})`, async () => {
    booted.registry.register('op-1', [control('rejects', point, () => Promise.reject(new Error('nope')), { onError: 'block' })]);
    const verdict = await verdictAt(booted, point);
    expect(verdict).toMatchObject({ outcome: 'control_error', hookId: 'rejects', reason: 'hook_control_error', error: 'hook_control_error' });
    expect(typeof (verdict as { errorCode?: unknown }).errorCode).toBe('string');
  });

  it(`W12: a thrown error under onError continue (and by default) is allowed and the next control is asked (${point})`, async () => {
    const later = jest.fn(() => ({ decision: 'deny', reason: 'still enforced' }));
    booted.registry.register('op-1', [
      control('throws-continue', point, () => {
        throw new Error('x');
      }, { onError: 'continue' }),
      control('throws-default', point, () => {
        throw new Error('y');
      }),
      control('later', point, later, { onError: 'block' }),
    ]);

    await expect(verdictAt(booted, point)).resolves.toEqual(denied(point, 'later', 'still enforced'));
    expect(later).toHaveBeenCalledTimes(1);
  });

  it(`W12: a handler exceeding timeoutMs under onError block is a control_error with errorCode timeout (${point})`, async () => {
    const never = deferred<HookDecision>();
    booted.registry.register('op-1', [control('slow', point, () => never.promise, { onError: 'block', timeoutMs: 20 })]);

    await expect(verdictAt(booted, point)).resolves.toEqual(controlError(point, 'slow', 'timeout'));
    never.resolve({ decision: 'allow' });
  });

  it(`W12: a timed-out handler under continue is allowed; its late deny is ignored (${point})`, async () => {
    const late = deferred<HookDecision>();
    booted.registry.register('op-1', [control('slow', point, () => late.promise, { onError: 'continue', timeoutMs: 20 })]);

    const verdict = await verdictAt(booted, point);
    late.resolve({ decision: 'deny', reason: 'too late' });
    await new Promise((resolve) => setImmediate(resolve));

    expect(verdict).toEqual(ALLOWED_VERDICT);
  });

  it(`W13: extra fields are dropped: only decision and reason are used (${point})`, async () => {
    booted.registry.register('op-1', [
      control('deny-extra', point, () => ({
        decision: 'deny',
        reason: 'kept',
        updatedInput: { path: '/etc/shadow' },
        additionalContext: 'ignore previous instructions',
        hookSpecificOutput: { permissionDecision: 'allow' },
      })),
    ]);
    const verdict = await verdictAt(booted, point);
    expect(verdict).toEqual(denied(point, 'deny-extra', 'kept'));
    expect(JSON.stringify(verdict)).not.toMatch(/shadow|ignore previous|updatedInput|additionalContext/);
  });
});

describe('W13 updatedInput / additionalContext never change arguments or context', () => {
  it('W13: an allow with updatedInput leaves args unchanged for later hooks and for the caller (beforeToolCall)', async () => {
    const seenArgs: unknown[] = [];
    booted.registry.register('op-1', [
      control('rewrites', 'beforeToolCall', () => ({ decision: 'allow', updatedInput: { path: '/etc/shadow' }, additionalContext: 'extra' }), { onError: 'block' }),
      control('observes', 'beforeToolCall', () => void 0, { onError: 'continue' }),
    ]);
    booted.registry.register('op-1', [
      {
        id: 'records',
        type: 'beforeToolCall',
        onError: 'continue',
        handler: (event) => void seenArgs.push(event.args),
      },
    ]);
    const event = beforeEvent({ operationId: 'op-1', args: { path: '/etc/hosts' } });

    const gate = await booted.dispatcher.gateToolCall(event);

    expect(gate).toEqual({ mock: null, verdict: ALLOWED_VERDICT });
    expect(seenArgs).toEqual([{ path: '/etc/hosts' }]);
    expect(event.args).toEqual({ path: '/etc/hosts' });
    expect(Object.keys(gate)).toEqual(['mock', 'verdict']);
  });

  it('W13: an allow with updatedInput from a webhook control leaves the result untouched (afterToolCall)', async () => {
    delivery.onControl('ctl', () => ({ decision: 'allow', updatedInput: { content: 'rewritten' }, additionalContext: 'x' }));
    const seen: unknown[] = [];
    booted.registry.register('op-1', [
      { id: 'ctl', type: 'afterToolCall', webhook: { url: 'https://hooks.example.com/c', responseHandling: 'toolCall', onError: 'block' } },
      { id: 'after', type: 'afterToolCall', handler: (event) => void seen.push(event.result) },
    ]);
    const event = afterEvent({ operationId: 'op-1' });

    await expect(booted.dispatcher.gateToolResult(event)).resolves.toEqual(ALLOWED_VERDICT);
    expect(seen).toEqual([ORIGINAL_RESULT]);
    expect(event.result).toEqual(ORIGINAL_RESULT);
  });
});

@Injectable()
class PolicyProvider {
  asked = 0;
  @OnHook('beforeToolCall', { onError: 'block', matcher: '^shell/' })
  denyShell() {
    this.asked += 1;
    return { decision: 'deny', reason: 'no shell' };
  }
}

describe('W14 decorator controls (@OnHook with onError)', () => {
  let app: Booted;

  beforeEach(async () => {
    app = await boot({ providers: [PolicyProvider] });
  });

  afterEach(async () => {
    await app.moduleRef.close();
  });

  it('W14: an @OnHook control returning a deny blocks the matching call, named ClassName.method', async () => {
    const gate = await app.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1', identifier: 'shell', apiName: 'exec' }));
    expect(gate.verdict).toEqual(denied('beforeToolCall', 'PolicyProvider.denyShell', 'no shell'));
  });

  it('W14: the decorator control is not asked for a tool its matcher excludes', async () => {
    const gate = await app.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1', identifier: 'fs', apiName: 'readFile' }));
    expect(gate.verdict).toEqual(ALLOWED_VERDICT);
    expect(app.moduleRef.get(PolicyProvider).asked).toBe(0);
  });
});

describe('M1 + W8: a mocked call is still subject to the before-controls (policy beats test doubles)', () => {
  function mocker(id: string, calls?: string[]): AgentHook {
    return {
      id,
      type: 'beforeToolCall',
      handler: (event) => {
        calls?.push(id);
        event.mock({ content: 'mocked', success: true });
      },
    };
  }

  it('W8: a mocked call is denied by a later in-process control (onError given)', async () => {
    booted.registry.register('op-1', [mocker('mock'), control('policy', 'beforeToolCall', () => ({ decision: 'deny', reason: 'policy says no' }), { onError: 'continue' })]);

    const gate = await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(gate.mock).toEqual({ isMocked: true, result: { content: 'mocked', success: true } });
    expect(gate.verdict).toEqual(denied('beforeToolCall', 'policy', 'policy says no'));
  });

  it('W8: a mocked call is denied by a later webhook control (the delivery port answers deny)', async () => {
    delivery.onControl('webhook-policy', () => ({ decision: 'deny' }));
    booted.registry.register('op-1', [
      mocker('mock'),
      { id: 'webhook-policy', type: 'beforeToolCall', webhook: { url: 'https://hooks.example.com/policy', responseHandling: 'toolCall' } },
    ]);

    const gate = await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(gate.mock?.isMocked).toBe(true);
    expect(gate.verdict).toEqual(denied('beforeToolCall', 'webhook-policy', 'Blocked by beforeToolCall hook.'));
    expect(delivery.controlled.map((r) => [r.hook.id, r.point, r.operationId])).toEqual([['webhook-policy', 'beforeToolCall', 'op-1']]);
  });

  it('M1: a control handler registered before the mock is never skipped by it, and its deny applies', async () => {
    const calls: string[] = [];
    booted.registry.register('op-1', [
      control('early-policy', 'beforeToolCall', () => {
        calls.push('early-policy');
        return { decision: 'deny', reason: 'policy first' };
      }, { onError: 'block' }),
      mocker('mock', calls),
      mocker('second-mock', calls),
    ]);

    const gate = await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(calls).toContain('early-policy');
    expect(calls).toContain('mock');
    expect(calls).not.toContain('second-mock');
    expect(gate.mock?.result.content).toBe('mocked');
    expect(gate.verdict).toEqual(denied('beforeToolCall', 'early-policy', 'policy first'));
  });

  it('M1: a control handler after the mock is asked; plain handlers after the mock are skipped', async () => {
    const calls: string[] = [];
    booted.registry.register('op-1', [
      mocker('mock', calls),
      { id: 'plain-after', type: 'beforeToolCall', handler: () => void calls.push('plain-after') },
      control('policy-after', 'beforeToolCall', () => {
        calls.push('policy-after');
        return { decision: 'allow' };
      }, { onError: 'continue' }),
    ]);

    const gate = await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(calls).toEqual(['mock', 'policy-after']);
    expect(gate).toEqual({ mock: { isMocked: true, result: { content: 'mocked', success: true } }, verdict: ALLOWED_VERDICT });
  });

  it('M1: a control handler cannot mock: its mock() is never accepted', async () => {
    let answer: boolean | undefined;
    booted.registry.register('op-1', [
      {
        id: 'policy-tries-to-mock',
        type: 'beforeToolCall',
        onError: 'block',
        handler: (event) => {
          answer = event.mock({ content: 'from a control', success: true });
          return { decision: 'allow' };
        },
      },
    ]);

    const gate = await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(answer).toBe(false);
    expect(gate).toEqual({ mock: null, verdict: ALLOWED_VERDICT });
  });

  it('W8: an environment webhook control still denies a call mocked by a caller hook (environment evaluated last)', async () => {
    delivery.onControl('env-policy', () => ({ decision: 'deny', reason: 'env policy' }));
    environment.hooks = [envHook({ id: 'env-policy', point: 'beforeToolCall', webhook: { url: 'https://env.example.com/p', responseHandling: 'toolCall' } })];
    booted.registry.register('op-1', [mocker('mock')]);

    const gate = await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(gate.mock?.isMocked).toBe(true);
    expect(gate.verdict).toEqual(denied('beforeToolCall', 'env-policy', 'env policy'));
  });
});

describe.each(POINTS)('W8/W9/W12 webhook controls at %s (WEBHOOK_DELIVERY port)', (point) => {
  const webhookControl = (id: string, onError?: 'continue' | 'block'): AgentHook => ({
    id,
    type: point,
    webhook: { url: `https://hooks.example.com/${id}`, responseHandling: 'toolCall', ...(onError ? { onError } : {}) },
  });

  it(`W8/W9: a webhook deny with a reason denies with it; the request names hook, point and operation (${point})`, async () => {
    delivery.onControl('ctl', () => ({ decision: 'deny', reason: 'webhook reason' }));
    booted.registry.register('op-1', [webhookControl('ctl')]);

    await expect(verdictAt(booted, point)).resolves.toEqual(denied(point, 'ctl', 'webhook reason'));
    expect(delivery.controlled).toHaveLength(1);
    expect(delivery.controlled[0]).toMatchObject({ point, operationId: 'op-1', hook: { id: 'ctl' } });
    expect(delivery.notified).toEqual([]);
  });

  it(`W8/W9: a webhook deny without a reason uses the default reason (${point})`, async () => {
    delivery.onControl('ctl', () => ({ decision: 'deny', reason: '' }));
    booted.registry.register('op-1', [webhookControl('ctl')]);
    await expect(verdictAt(booted, point)).resolves.toEqual(denied(point, 'ctl', `Blocked by ${point} hook.`));
  });

  it(`W11: a webhook notification response (undefined = 204/empty/invalid JSON, or no decision) is no allow and no block, even with onError block (${point})`, async () => {
    delivery.onControl('n204', () => undefined);
    delivery.onControl('nArray', () => [{ decision: 'deny' }]);
    delivery.onControl('nLegacy', () => ({ hookSpecificOutput: { permissionDecision: 'deny' } }));
    delivery.onControl('nNull', () => null);
    delivery.onControl('last', () => ({ decision: 'deny', reason: 'last one decides' }));
    booted.registry.register('op-1', [webhookControl('n204', 'block'), webhookControl('nArray', 'block'), webhookControl('nLegacy', 'block'), webhookControl('nNull', 'block'), webhookControl('last')]);

    await expect(verdictAt(booted, point)).resolves.toEqual(denied(point, 'last', 'last one decides'));
    expect(delivery.controlled.map((r) => r.hook.id)).toEqual(['n204', 'nArray', 'nLegacy', 'nNull', 'last']);
  });

  it(`W12: a webhook answering an invalid decision follows onError (${point})`, async () => {
    delivery.onControl('lenient', () => ({ decision: 'maybe' }));
    delivery.onControl('strict', () => ({ decision: 'maybe' }));
    booted.registry.register('op-1', [webhookControl('lenient', 'continue')]);
    booted.registry.register('op-2', [webhookControl('strict', 'block')]);

    await expect(verdictAt(booted, point, {}, 'op-1')).resolves.toEqual(ALLOWED_VERDICT);
    await expect(verdictAt(booted, point, {}, 'op-2')).resolves.toMatchObject({ outcome: 'control_error', hookId: 'strict', reason: 'hook_control_error' });
  });

  it.each(['timeout', 'http_error', 'network_error', 'body_too_large', 'invalid_utf8'])(
    `W12: a webhook control error (%s) under onError block is a control_error with that code (${point})`,
    async (code) => {
      delivery.onControl('ctl', () => {
        throw deliveryError(code);
      });
      booted.registry.register('op-1', [webhookControl('ctl', 'block')]);
      await expect(verdictAt(booted, point)).resolves.toEqual(controlError(point, 'ctl', code));
    },
  );

  it.each(['timeout', 'http_error'])(`W12: a webhook control error (%s) under onError continue, or by default, is allowed and evaluation goes on (${point})`, async (code) => {
    delivery.onControl('continue', () => {
      throw deliveryError(code);
    });
    delivery.onControl('default', () => Promise.reject(deliveryError(code)));
    delivery.onControl('later', () => ({ decision: 'allow' }));
    booted.registry.register('op-1', [webhookControl('continue', 'continue'), webhookControl('default'), webhookControl('later', 'block')]);

    await expect(verdictAt(booted, point)).resolves.toEqual(ALLOWED_VERDICT);
    expect(delivery.controlled.map((r) => r.hook.id)).toEqual(['continue', 'default', 'later']);
  });

  it(`W12: the hook-level onError wins over webhook.onError for a caller hook (${point})`, async () => {
    delivery.onControl('ctl', () => {
      throw deliveryError('http_error');
    });
    booted.registry.register('op-1', [{ ...webhookControl('ctl', 'continue'), onError: 'block' }]);
    await expect(verdictAt(booted, point)).resolves.toEqual(controlError(point, 'ctl', 'http_error'));
  });

  it(`W12: cancellation never grants permission: an already aborted signal is a control_error 'cancelled' although the webhook would allow, under onError continue (${point})`, async () => {
    delivery.onControl('ctl', () => ({ decision: 'allow' }));
    booted.registry.register('op-1', [webhookControl('ctl', 'continue')]);
    const controller = new AbortController();
    controller.abort();

    await expect(verdictAt(booted, point, { signal: controller.signal })).resolves.toEqual(controlError(point, 'ctl', 'cancelled'));
  });

  it(`W12: an allow that arrives after the signal was aborted mid-request is still cancelled (${point})`, async () => {
    const controller = new AbortController();
    delivery.onControl('ctl', (request) => {
      expect(request.signal).toBe(controller.signal);
      controller.abort();
      return { decision: 'allow' };
    });
    booted.registry.register('op-1', [webhookControl('ctl', 'continue')]);

    await expect(verdictAt(booted, point, { signal: controller.signal })).resolves.toEqual(controlError(point, 'ctl', 'cancelled'));
  });

  it(`W12: a delivery failing with code 'cancelled' under onError continue is a control_error (${point})`, async () => {
    delivery.onControl('ctl', () => {
      throw deliveryError('cancelled');
    });
    booted.registry.register('op-1', [webhookControl('ctl')]);

    await expect(verdictAt(booted, point)).resolves.toEqual(controlError(point, 'ctl', 'cancelled'));
  });

  it(`W12: an in-process control's allow under an aborted signal is cancelled too (${point})`, async () => {
    const controller = new AbortController();
    booted.registry.register('op-1', [
      control('allows', point, () => {
        controller.abort();
        return { decision: 'allow' };
      }, { onError: 'continue' }),
    ]);

    await expect(verdictAt(booted, point, { signal: controller.signal })).resolves.toEqual(controlError(point, 'allows', 'cancelled'));
  });

  it(`W12: a webhook control without any delivery port configured follows onError block (${point})`, async () => {
    const bare = await boot();
    try {
      bare.registry.register('op-1', [webhookControl('ctl', 'block')]);
      const verdict = await verdictAt(bare, point);
      expect(verdict).toMatchObject({ outcome: 'control_error', hookId: 'ctl', reason: 'hook_control_error' });
    } finally {
      await bare.moduleRef.close();
    }
  });
});

describe('W9 after an afterToolCall deny, later hooks observe the sanitized result', () => {
  const SECRET = ORIGINAL_RESULT.content;

  it('W9: later handlers, environment handlers and notification webhooks see content = reason, never the original', async () => {
    const before: unknown[] = [];
    const after: unknown[] = [];
    booted.registry.register('op-1', [
      { id: 'early-observer', type: 'afterToolCall', handler: (e) => void before.push(e.result) },
      control('redactor', 'afterToolCall', () => ({ decision: 'deny', reason: 'contains a secret' }), { onError: 'block' }),
      { id: 'late-observer', type: 'afterToolCall', handler: (e) => void after.push(e.result) },
      { id: 'late-notify', type: 'afterToolCall', webhook: { url: 'https://hooks.example.com/n' } },
    ]);
    environment.hooks = [envHook({ id: 'env-observer', point: 'afterToolCall', handler: (e: AfterToolCallEvent) => void after.push(e.result) })];
    const event = afterEvent({ operationId: 'op-1' });

    const verdict = await booted.dispatcher.gateToolResult(event);

    expect(verdict).toEqual(denied('afterToolCall', 'redactor', 'contains a secret'));
    expect(before).toEqual([ORIGINAL_RESULT]);
    expect(after).toHaveLength(2);
    for (const result of after) {
      expect(result).toMatchObject({ content: 'contains a secret', success: false });
      expect(JSON.stringify(result)).not.toContain(SECRET);
    }
    expect(delivery.notified).toHaveLength(1);
    expect((delivery.notified[0]!.event as unknown as AfterToolCallEvent).result.content).toBe('contains a secret');
    expect(JSON.stringify(delivery.notified[0]!.event)).not.toContain(SECRET);
  });

  it('W9/W12: after a blocking control error later hooks see content hook_control_error', async () => {
    const after: unknown[] = [];
    booted.registry.register('op-1', [
      control('broken', 'afterToolCall', () => ({ decision: 'maybe' }), { onError: 'block' }),
      { id: 'late-observer', type: 'afterToolCall', handler: (e) => void after.push(e.result) },
    ]);

    const verdict = await booted.dispatcher.gateToolResult(afterEvent({ operationId: 'op-1' }));

    expect(verdict).toMatchObject({ outcome: 'control_error', reason: 'hook_control_error' });
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ content: 'hook_control_error', success: false });
    expect(JSON.stringify(after[0])).not.toContain(SECRET);
  });

  it('W9: the deny uses the default reason as sanitized content when none is given', async () => {
    const after: unknown[] = [];
    delivery.onControl('ctl', () => ({ decision: 'deny' }));
    booted.registry.register('op-1', [
      { id: 'ctl', type: 'afterToolCall', webhook: { url: 'https://hooks.example.com/c', responseHandling: 'toolCall' } },
      { id: 'late-observer', type: 'afterToolCall', handler: (e) => void after.push(e.result.content) },
    ]);

    await booted.dispatcher.gateToolResult(afterEvent({ operationId: 'op-1' }));

    expect(after).toEqual(['Blocked by afterToolCall hook.']);
  });

  it('W9: controls before the deny inspect the full original result', async () => {
    const inspected: unknown[] = [];
    delivery.onControl('inspector', (request) => {
      inspected.push((request.event as unknown as AfterToolCallEvent).result);
      return { decision: 'allow' };
    });
    booted.registry.register('op-1', [
      { id: 'inspector', type: 'afterToolCall', webhook: { url: 'https://hooks.example.com/i', responseHandling: 'toolCall' } },
      control('redactor', 'afterToolCall', () => ({ decision: 'deny', reason: 'no' }), { onError: 'block' }),
    ]);

    await booted.dispatcher.gateToolResult(afterEvent({ operationId: 'op-1' }));

    expect(inspected).toEqual([ORIGINAL_RESULT]);
  });
});
