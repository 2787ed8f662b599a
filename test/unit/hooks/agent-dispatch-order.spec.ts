/**
 * A1 / A4 / L3 (DESIGN §3): registration and source order of agent-family hooks, batch validation of
 * caller hooks, and removal of an operation's registrations.
 */
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { HookConfigurationError, OnHook, type AgentHook, type AgentHookPoint, type BeforeToolCallEvent } from '../../../src/index.js';
import { beforeEvent, boot, captureLogs, envHook, stepEvent, TestEnvironment, type Booted } from './agent-test-kit.js';

const trace: string[] = [];

@Injectable()
class DefaultOrderA {
  @OnHook('afterStep')
  a() {
    trace.push('app:A');
  }

  @OnHook('beforeToolCall')
  beforeA() {
    trace.push('app:A');
  }
}

@Injectable()
class LateC {
  @OnHook('afterStep', { order: 5 })
  c() {
    trace.push('app:C');
  }
}

@Injectable()
class EarlyB {
  @OnHook('afterStep', { order: -1 })
  b() {
    trace.push('app:B');
  }

  @OnHook('beforeToolCall', { order: -1 })
  beforeB() {
    trace.push('app:B');
  }
}

@Injectable()
class DefaultOrderD {
  @OnHook('afterStep')
  d() {
    trace.push('app:D');
  }
}

function callerHook(id: string, type: AgentHookPoint = 'afterStep', extra: Partial<AgentHook> = {}): AgentHook {
  return { id, type, handler: () => void trace.push(`caller:${id}`), ...extra } as AgentHook;
}

describe('A1 registration order and source order (app → caller → environment)', () => {
  let booted: Booted;
  let environment: TestEnvironment;

  beforeEach(async () => {
    trace.length = 0;
    captureLogs();
    environment = new TestEnvironment();
    booted = await boot({ providers: [DefaultOrderA, LateC, EarlyB, DefaultOrderD], environment });
  });

  afterEach(async () => {
    await booted.moduleRef.close();
    jest.restoreAllMocks();
  });

  it('A1: app hooks run by `order`, ties in discovery order, then caller hooks in registration order, then environment hooks last', async () => {
    // Environment hooks exist before the caller registers: they still run last.
    environment.hooks = [
      envHook({ id: 'e1', point: 'afterStep', handler: () => void trace.push('env:e1') }),
      envHook({ id: 'e2', point: 'afterStep', handler: () => void trace.push('env:e2') }),
    ];
    booted.registry.register('op-1', [callerHook('c1'), callerHook('c2')]);

    await booted.dispatcher.dispatch('afterStep', stepEvent('op-1'));

    expect(trace).toEqual(['app:B', 'app:A', 'app:D', 'app:C', 'caller:c1', 'caller:c2', 'env:e1', 'env:e2']);
  });

  it('A1: register appends to the operation’s earlier registrations', async () => {
    booted.registry.register('op-1', [callerHook('c1')]);
    booted.registry.register('op-1', [callerHook('c2'), callerHook('c3')]);
    booted.registry.register('op-1', [callerHook('c4')]);

    await booted.dispatcher.dispatch('afterStep', stepEvent('op-1'));

    expect(trace.filter((t) => t.startsWith('caller:'))).toEqual(['caller:c1', 'caller:c2', 'caller:c3', 'caller:c4']);
    expect(booted.registry.callerHooks('op-1', 'afterStep').map((h) => h.id)).toEqual(['c1', 'c2', 'c3', 'c4']);
  });

  it('A1: caller hooks keep registration order across a mixed batch (order is not by id or by point)', async () => {
    booted.registry.register('op-1', [callerHook('z'), callerHook('t1', 'beforeStep'), callerHook('a'), callerHook('m')]);

    await booted.dispatcher.dispatch('afterStep', stepEvent('op-1'));

    expect(trace.filter((t) => t.startsWith('caller:'))).toEqual(['caller:z', 'caller:a', 'caller:m']);
  });

  it('A1/L3: caller hook ids are not de-duplicated (the same id registered twice runs twice)', async () => {
    booted.registry.register('op-1', [callerHook('dup')]);
    booted.registry.register('op-1', [callerHook('dup')]);

    await booted.dispatcher.dispatch('afterStep', stepEvent('op-1'));

    expect(trace.filter((t) => t === 'caller:dup')).toHaveLength(2);
  });

  it('A1: only the dispatched operation’s caller hooks run', async () => {
    booted.registry.register('op-1', [callerHook('mine')]);
    booted.registry.register('op-2', [callerHook('theirs')]);

    await booted.dispatcher.dispatch('afterStep', stepEvent('op-2'));

    expect(trace).toContain('caller:theirs');
    expect(trace).not.toContain('caller:mine');
  });

  it('A1/L3: environment hooks are read at each dispatch: a removed environment hook no longer runs, an added one runs last', async () => {
    booted.registry.register('op-1', [callerHook('c1')]);
    environment.hooks = [envHook({ id: 'old', point: 'afterStep', handler: () => void trace.push('env:old') })];
    await booted.dispatcher.dispatch('afterStep', stepEvent('op-1'));
    expect(trace.slice(-2)).toEqual(['caller:c1', 'env:old']);

    trace.length = 0;
    environment.hooks = [envHook({ id: 'new', point: 'afterStep', handler: () => void trace.push('env:new') })];
    await booted.dispatcher.dispatch('afterStep', stepEvent('op-1'));
    expect(trace).not.toContain('env:old');
    expect(trace.slice(-2)).toEqual(['caller:c1', 'env:new']);
  });

  it('A1/L1: a dispatch given a step’s environment read (`options.environment`) runs those hooks last and reads the source not at all', async () => {
    booted.registry.register('op-1', [callerHook('c1')]);
    environment.hooks = [envHook({ id: 'current', point: 'afterStep', handler: () => void trace.push('env:current') })];
    const stepHook = envHook({ id: 'step', point: 'afterStep', handler: () => void trace.push('env:step') });
    const snapshot = { hooksFor: (point: string) => (point === 'afterStep' ? [stepHook] : []) };
    const reads = environment.reads;
    await booted.dispatcher.dispatch('afterStep', stepEvent('op-1'), { environment: snapshot });
    expect(environment.reads).toBe(reads);
    expect(trace).not.toContain('env:current');
    expect(trace.slice(-2)).toEqual(['caller:c1', 'env:step']);
    // Without one, the dispatch reads the current environment.
    trace.length = 0;
    await booted.dispatcher.dispatch('afterStep', stepEvent('op-1'));
    expect(trace.slice(-2)).toEqual(['caller:c1', 'env:current']);
  });

  it('L1: environmentSnapshot() is the source’s own snapshot when it has one, else the source itself (read at each dispatch)', () => {
    expect(booted.dispatcher.environmentSnapshot()).toBe(environment);
    const taken = { hooksFor: () => [] };
    const withSnapshot = Object.assign(environment, { snapshot: () => taken });
    expect(booted.dispatcher.environmentSnapshot()).toBe(taken);
    delete (withSnapshot as { snapshot?: unknown }).snapshot;
  });

  it('A1: the beforeToolCall gate offers handlers in the same source order (app by order → caller → environment)', async () => {
    environment.hooks = [envHook({ id: 'e1', point: 'beforeToolCall', handler: () => void trace.push('env:e1') })];
    booted.registry.register('op-1', [callerHook('c1', 'beforeToolCall'), callerHook('c2', 'beforeToolCall')]);

    const gate = await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(trace).toEqual(['app:B', 'app:A', 'caller:c1', 'caller:c2', 'env:e1']);
    expect(gate).toEqual({ mock: null, verdict: { outcome: 'allowed' } });
  });

  it('A1: an earlier source’s mock wins over a later one (app before caller before environment)', async () => {
    environment.hooks = [
      envHook({ id: 'env-mock', point: 'beforeToolCall', handler: (e: BeforeToolCallEvent) => void e.mock({ content: 'env', success: true }) }),
    ];
    booted.registry.register('op-1', [
      { id: 'caller-mock', type: 'beforeToolCall', handler: (e) => void e.mock({ content: 'caller', success: true }) },
    ]);

    const gate = await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1' }));

    expect(gate.mock).toEqual({ isMocked: true, result: { content: 'caller', success: true } });
  });
});

describe('A1 register validates the whole batch before changing anything', () => {
  let booted: Booted;

  beforeEach(async () => {
    trace.length = 0;
    captureLogs();
    booted = await boot();
  });

  afterEach(async () => {
    await booted.moduleRef.close();
    jest.restoreAllMocks();
  });

  it('A1: a batch with one bad hook is rejected whole: earlier registrations are unchanged and nothing is added', async () => {
    booted.registry.register('op-1', [callerHook('kept')]);

    expect(() =>
      booted.registry.register('op-1', [callerHook('good-1'), callerHook('good-2', 'beforeToolCall'), { id: 'bad', type: 'afterStep' } as AgentHook]),
    ).toThrow(HookConfigurationError);

    expect(booted.registry.callerHooks('op-1', 'afterStep').map((h) => h.id)).toEqual(['kept']);
    expect(booted.registry.callerHooks('op-1', 'beforeToolCall')).toHaveLength(0);
    await booted.dispatcher.dispatch('afterStep', stepEvent('op-1'));
    await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1' }));
    expect(trace).toEqual(['caller:kept']);
  });

  it('A1: a rejected first batch leaves no trace of the operation', () => {
    expect(() => booted.registry.register('op-new', [callerHook('good'), { id: 'bad', type: 'nope' } as unknown as AgentHook])).toThrow(
      HookConfigurationError,
    );
    expect(booted.registry.hasCallerHooks('op-new')).toBe(false);
    expect(booted.registry.operationCount).toBe(0);
  });

  it('A1: the bad hook may be first, middle or last: the error is the same and nothing is registered', () => {
    const bad = { id: 'bad', type: 'afterStep', handler: 'not a function' } as unknown as AgentHook;
    for (const batch of [[bad, callerHook('g')], [callerHook('g'), bad, callerHook('h')], [callerHook('g'), bad]]) {
      expect(() => booted.registry.register('op-1', batch)).toThrow(HookConfigurationError);
    }
    expect(booted.registry.operationCount).toBe(0);
  });

  const badHooks: Array<[string, unknown]> = [
    ['an unknown type', { id: 'x', type: 'beforeEverything', handler: () => undefined }],
    ['an engine-family point (snake_case)', { id: 'x', type: 'before_tool_call', handler: () => undefined }],
    ['an engine-family transform point', { id: 'x', type: 'on_run_start', handler: () => undefined }],
    ['neither a handler nor a webhook', { id: 'x', type: 'afterStep' }],
    ['a matcher on a non-tool event', { id: 'x', type: 'afterStep', matcher: '^fs/', handler: () => undefined }],
    ['a matcher on beforeCompact (not a tool event)', { id: 'x', type: 'beforeCompact', matcher: 'fs', handler: () => undefined }],
    ["W5: matcher '' on a non-tool event", { id: 'x', type: 'onComplete', matcher: '', handler: () => undefined }],
    ["W5: matcher '*' on a non-tool event", { id: 'x', type: 'afterStep', matcher: '*', webhook: { url: 'https://receiver.example.com/h' } }],
    ['an invalid regex matcher', { id: 'x', type: 'beforeToolCall', matcher: '(unclosed', handler: () => undefined }],
    ['a handler that is not a function', { id: 'x', type: 'afterStep', handler: 'audit' }],
    ['an empty id', { id: '', type: 'afterStep', handler: () => undefined }],
    ['a missing id', { type: 'afterStep', handler: () => undefined }],
    ['an unknown onError', { id: 'x', type: 'beforeToolCall', onError: 'explode', handler: () => undefined }],
    ['a non-positive timeoutMs', { id: 'x', type: 'beforeToolCall', timeoutMs: 0, handler: () => undefined }],
    ['a webhook without url', { id: 'x', type: 'afterStep', webhook: {} }],
    ['a null entry', null],
  ];

  it.each(badHooks)('A1: a hook with %s is rejected with HookConfigurationError', (_label, hook) => {
    expect(() => booted.registry.register('op-1', [callerHook('good'), hook as AgentHook])).toThrow(HookConfigurationError);
    expect(booted.registry.hasCallerHooks('op-1')).toBe(false);
  });

  it('A1: the configuration error names the offending entry by index and id', () => {
    expect(() => booted.registry.register('op-1', [callerHook('good'), { id: 'wrong-point', type: 'on_run_end', handler: () => undefined } as unknown as AgentHook])).toThrow(
      /hooks\[1\].*wrong-point/,
    );
  });

  it('A1: register needs a non-empty operation id and an array', () => {
    expect(() => booted.registry.register('', [callerHook('g')])).toThrow(HookConfigurationError);
    expect(() => booted.registry.register('op-1', { id: 'g' } as unknown as AgentHook[])).toThrow(HookConfigurationError);
    expect(booted.registry.operationCount).toBe(0);
  });

  it('A1: a valid webhook-only caller hook is accepted and keeps its place in the order', () => {
    booted.registry.register('op-1', [callerHook('h1'), { id: 'w1', type: 'afterStep', webhook: { url: 'https://hooks.example.com/x' } }, callerHook('h2')]);
    expect(booted.registry.callerHooks('op-1', 'afterStep').map((h) => [h.id, h.source])).toEqual([
      ['h1', 'caller'],
      ['w1', 'caller'],
      ['h2', 'caller'],
    ]);
  });
});

describe('A4 unregister(operationId) removes everything', () => {
  let booted: Booted;

  beforeEach(async () => {
    trace.length = 0;
    captureLogs();
    booted = await boot();
  });

  afterEach(async () => {
    await booted.moduleRef.close();
    jest.restoreAllMocks();
  });

  it('A4: after unregister nothing of the operation stays and later dispatches do not call its handlers', async () => {
    const denyHandler = jest.fn(() => ({ decision: 'deny', reason: 'stale policy' }));
    booted.registry.register('op-1', [
      callerHook('c1'),
      callerHook('c2', 'beforeStep'),
      { id: 'deny', type: 'beforeToolCall', handler: denyHandler, onError: 'block' },
      { id: 'w', type: 'afterToolCall', webhook: { url: 'https://hooks.example.com/w', responseHandling: 'toolCall' } },
    ]);
    booted.registry.register('op-1', [callerHook('c3')]);
    expect(booted.registry.operationCount).toBe(1);
    expect(booted.registry.hasCallerHooks('op-1')).toBe(true);

    booted.registry.unregister('op-1');

    expect(booted.registry.operationCount).toBe(0);
    expect(booted.registry.hasCallerHooks('op-1')).toBe(false);
    for (const point of ['afterStep', 'beforeStep', 'beforeToolCall', 'afterToolCall'] as const) {
      expect(booted.registry.callerHooks('op-1', point)).toHaveLength(0);
      expect(booted.dispatcher.hasHooks(point, 'op-1')).toBe(false);
    }
    await booted.dispatcher.dispatch('afterStep', stepEvent('op-1'));
    const gate = await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1' }));
    expect(trace).toEqual([]);
    expect(denyHandler).not.toHaveBeenCalled();
    expect(gate.verdict).toEqual({ outcome: 'allowed' });
  });

  it('A4: unregister touches only its own operation', async () => {
    booted.registry.register('op-1', [callerHook('one')]);
    booted.registry.register('op-2', [callerHook('two')]);

    booted.registry.unregister('op-1');

    expect(booted.registry.operationCount).toBe(1);
    await booted.dispatcher.dispatch('afterStep', stepEvent('op-2'));
    await booted.dispatcher.dispatch('afterStep', stepEvent('op-1'));
    expect(trace).toEqual(['caller:two']);
  });

  it('A4: many operations registered then unregistered leave the registry empty', () => {
    for (let i = 0; i < 500; i++) booted.registry.register(`op-${i}`, [callerHook(`h${i}`), callerHook(`t${i}`, 'afterToolCall')]);
    expect(booted.registry.operationCount).toBe(500);
    for (let i = 0; i < 500; i++) booted.registry.unregister(`op-${i}`);
    expect(booted.registry.operationCount).toBe(0);
  });

  it('A4: unregistering an unknown operation is harmless', () => {
    booted.registry.register('op-1', [callerHook('one')]);
    expect(() => booted.registry.unregister('never-registered')).not.toThrow();
    expect(booted.registry.operationCount).toBe(1);
  });

  it('A4: an operation can register again after unregister, starting from an empty list', async () => {
    booted.registry.register('op-1', [callerHook('old')]);
    booted.registry.unregister('op-1');
    booted.registry.register('op-1', [callerHook('new')]);

    await booted.dispatcher.dispatch('afterStep', stepEvent('op-1'));

    expect(trace).toEqual(['caller:new']);
  });
});
