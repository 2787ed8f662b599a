/**
 * `@OnHook` discovery at bootstrap (DESIGN §2 `hook-explorer.ts`, §3 source order, §6): stacking, `order`,
 * controllers, aliases, request-scoped providers, validation naming class and method, readiness.
 */
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller, Inject, Injectable, Logger, Module, Scope, type Type } from '@nestjs/common';
import { REQUEST } from '@nestjs/core';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  AgentHooksModule,
  HookConfigurationError,
  HookDispatcher,
  HookInvocation,
  HookRegistry,
  OnHook,
  ON_HOOK_METADATA,
  ToolCallContext,
  ToolResultContext,
  type AfterStepEvent,
  type HookPoint,
  type OnHookMetadata,
} from '../../../src/index.js';
import { HookReadinessWatcher } from '../../../src/hooks/hook-readiness.watcher.js';

const opened: Array<{ close(): Promise<unknown> }> = [];

async function compile(...providers: Type[]): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({ imports: [AgentHooksModule.forRoot({ configFile: false })], providers }).compile();
  opened.push(moduleRef);
  return moduleRef;
}

async function boot(...providers: Type[]): Promise<{ moduleRef: TestingModule; dispatcher: HookDispatcher; registry: HookRegistry }> {
  const moduleRef = await compile(...providers);
  await moduleRef.init();
  return { moduleRef, dispatcher: moduleRef.get(HookDispatcher), registry: moduleRef.get(HookRegistry) };
}

beforeEach(() => {
  // Nest logs failed bootstraps; keep the output clean.
  jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
});

afterEach(async () => {
  jest.restoreAllMocks();
  while (opened.length > 0) {
    try {
      await opened.pop()!.close();
    } catch {
      // a module whose init failed may not close cleanly; nothing to assert here
    }
  }
});

const toolInit = { runId: 'run-1', toolCallId: 'call-1', identifier: 'fs', apiName: 'readFile', provider: 'local' };
const step = (stepIndex = 0, operationId = 'op-1') => ({ stepIndex, operationId }) as AfterStepEvent;
const callCtx = () => new ToolCallContext({ ...toolInit, status: 'ok', latencyMs: 1 });

// ---------------------------------------------------------------------------------------------------------
describe('discovery: decorators', () => {
  it('DESIGN §2: @OnHook metadata is an array on the method, so decorators stack', () => {
    class Stacked {
      @OnHook('afterStep')
      @OnHook('on_run_end', { failurePolicy: 'warn' })
      both() {}
    }
    const metadata = Reflect.getMetadata(ON_HOOK_METADATA, Stacked.prototype.both) as OnHookMetadata[];
    expect(Array.isArray(metadata)).toBe(true);
    expect(metadata.map((m) => m.point).sort()).toEqual(['afterStep', 'on_run_end']);
    expect(metadata.find((m) => m.point === 'on_run_end')?.options).toEqual({ failurePolicy: 'warn' });
  });

  it('DESIGN §2: two @OnHook on one method → two registrations, each fired at its point', async () => {
    const calls: string[] = [];
    @Injectable()
    class TwoPoints {
      @OnHook('afterStep')
      @OnHook('after_tool_call')
      seen(arg: unknown) {
        calls.push(arg instanceof HookInvocation ? `engine:${arg.point}` : `agent:${(arg as AfterStepEvent).stepIndex}`);
      }
    }
    const { dispatcher, registry } = await boot(TwoPoints);
    expect(registry.appHooks('afterStep')).toHaveLength(1);
    expect(registry.appHooks('after_tool_call')).toHaveLength(1);
    expect(registry.appHooks('afterStep')[0]).toMatchObject({ id: 'TwoPoints.seen', source: 'decorator', plugin: 'TwoPoints', method: 'seen' });
    await dispatcher.dispatch('afterStep', step(4));
    await dispatcher.dispatch('after_tool_call', callCtx());
    expect(calls).toEqual(['agent:4', 'engine:after_tool_call']);
  });

  it('DESIGN §2: the same point twice on one method → called twice per dispatch', async () => {
    let count = 0;
    @Injectable()
    class Twice {
      @OnHook('afterStep')
      @OnHook('afterStep')
      seen() {
        count++;
      }
    }
    const { dispatcher, registry } = await boot(Twice);
    expect(registry.appHooks('afterStep')).toHaveLength(2);
    await dispatcher.dispatch('afterStep', step());
    expect(count).toBe(2);
  });

  it('DESIGN §3: the order option sorts app hooks (lower first); ties keep discovery order', async () => {
    const calls: string[] = [];
    @Injectable()
    class First {
      @OnHook('afterStep', { order: 5 }) late() { calls.push('First.late(5)'); }
      @OnHook('afterStep') plainA() { calls.push('First.plainA(0)'); }
      @OnHook('afterStep', { order: -10 }) early() { calls.push('First.early(-10)'); }
    }
    @Injectable()
    class Second {
      @OnHook('afterStep', { order: 1 }) one() { calls.push('Second.one(1)'); }
      @OnHook('afterStep') plainB() { calls.push('Second.plainB(0)'); }
      @OnHook('afterStep', { order: 5 }) alsoLate() { calls.push('Second.alsoLate(5)'); }
    }
    const { dispatcher, registry } = await boot(First, Second);
    await dispatcher.dispatch('afterStep', step());
    expect(calls).toEqual(['First.early(-10)', 'First.plainA(0)', 'Second.plainB(0)', 'Second.one(1)', 'First.late(5)', 'Second.alsoLate(5)']);
    expect(registry.appHooks('afterStep').map((h) => h.order)).toEqual([-10, 0, 0, 1, 5, 5]);
  });

  it('DESIGN §3: without order, hooks run in discovery order (declaration order within a class)', async () => {
    const calls: string[] = [];
    @Injectable()
    class Ordered {
      @OnHook('on_run_end') c() { calls.push('c'); }
      @OnHook('on_run_end') a() { calls.push('a'); }
      @OnHook('on_run_end') b() { calls.push('b'); }
    }
    const { dispatcher } = await boot(Ordered);
    await dispatcher.dispatch('on_run_end', { runId: 'r' } as never);
    expect(calls).toEqual(['c', 'a', 'b']);
  });

  it('DESIGN §2: hooks are discovered in controllers too', async () => {
    const calls: number[] = [];
    @Controller('x')
    class HookedController {
      @OnHook('afterStep')
      seen(event: AfterStepEvent) {
        calls.push(event.stepIndex);
      }
    }
    const moduleRef = await Test.createTestingModule({ imports: [AgentHooksModule.forRoot({ configFile: false })], controllers: [HookedController] }).compile();
    opened.push(moduleRef);
    await moduleRef.init();
    await moduleRef.get(HookDispatcher).dispatch('afterStep', step(7));
    expect(calls).toEqual([7]);
    expect(moduleRef.get(HookRegistry).appHooks('afterStep')[0]?.id).toBe('HookedController.seen');
  });

  it('DESIGN §2: hooks are discovered in providers of imported feature modules', async () => {
    const calls: string[] = [];
    @Injectable()
    class FeatureHooks {
      @OnHook('on_run_end')
      start() {
        calls.push('feature');
      }
    }
    @Module({ providers: [FeatureHooks] })
    class FeatureModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AgentHooksModule.forRoot({ configFile: false }), FeatureModule] }).compile();
    opened.push(moduleRef);
    await moduleRef.init();
    await moduleRef.get(HookDispatcher).dispatch('on_run_end', { runId: 'r' } as never);
    expect(calls).toEqual(['feature']);
  });

  it('DESIGN §2: an alias (useExisting) is not registered twice', async () => {
    let count = 0;
    @Injectable()
    class Aliased {
      @OnHook('afterStep')
      seen() {
        count++;
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [AgentHooksModule.forRoot({ configFile: false })],
      providers: [Aliased, { provide: 'ALIAS_ONE', useExisting: Aliased }, { provide: 'ALIAS_TWO', useExisting: Aliased }],
    }).compile();
    opened.push(moduleRef);
    await moduleRef.init();
    expect(moduleRef.get('ALIAS_ONE')).toBe(moduleRef.get(Aliased));
    expect(moduleRef.get(HookRegistry).appHooks('afterStep')).toHaveLength(1);
    await moduleRef.get(HookDispatcher).dispatch('afterStep', step());
    expect(count).toBe(1);
  });

  it('E7/DESIGN §6: factory and value providers are discovered and named after the instance class, not the factory or token', async () => {
    const calls: string[] = [];
    class FactoryMade {
      @OnHook('after_tool_call')
      audit(inv: HookInvocation) {
        calls.push(`factory:${inv.plugin}.${inv.method}`);
      }
    }
    class ValueMade {
      @OnHook('after_tool_call')
      audit(inv: HookInvocation) {
        calls.push(`value:${inv.plugin}.${inv.method}`);
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [AgentHooksModule.forRoot({ configFile: false })],
      providers: [
        { provide: 'BY_FACTORY', useFactory: () => new FactoryMade() },
        { provide: 'BY_VALUE', useValue: new ValueMade() },
      ],
    }).compile();
    opened.push(moduleRef);
    await moduleRef.init();
    expect(moduleRef.get(HookRegistry).appHooks('after_tool_call').map((h) => h.id).sort()).toEqual(['FactoryMade.audit', 'ValueMade.audit']);
    await moduleRef.get(HookDispatcher).dispatch('after_tool_call', callCtx());
    expect(calls.sort()).toEqual(['factory:FactoryMade.audit', 'value:ValueMade.audit']);
  });

  it('DESIGN §2: a decorated method inherited from a base class is discovered on the subclass provider', async () => {
    const calls: string[] = [];
    class BaseHooks {
      label = 'base';
      @OnHook('afterStep')
      seen() {
        calls.push(this.label);
      }
    }
    @Injectable()
    class ChildHooks extends BaseHooks {
      override label = 'child';
    }
    const { dispatcher, registry } = await boot(ChildHooks);
    expect(registry.appHooks('afterStep')).toHaveLength(1);
    await dispatcher.dispatch('afterStep', step());
    expect(calls).toEqual(['child']);
  });

  it('DESIGN §2: an overriding subclass decorator does not mutate the parent method metadata', () => {
    class Parent {
      @OnHook('afterStep')
      seen() {}
    }
    class Child extends Parent {
      @OnHook('onComplete')
      override seen() {}
    }
    const parent = Reflect.getMetadata(ON_HOOK_METADATA, Parent.prototype.seen) as OnHookMetadata[];
    const child = Reflect.getMetadata(ON_HOOK_METADATA, Child.prototype.seen) as OnHookMetadata[];
    expect(parent.map((m) => m.point)).toEqual(['afterStep']);
    expect(child.map((m) => m.point)).toEqual(['onComplete']);
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('discovery: request-scoped providers', () => {
  it('DESIGN §2: a request-scoped provider gets a fresh instance per dispatch, and its hook works', async () => {
    let nextId = 0;
    const seen: Array<{ id: number; result: string }> = [];
    @Injectable({ scope: Scope.REQUEST })
    class PerRequest {
      readonly instanceId = ++nextId;
      @OnHook('transform_tool_result')
      tag(inv: HookInvocation) {
        const r = inv.payloadAs(ToolResultContext);
        seen.push({ id: this.instanceId, result: r.result });
        return r.withResult(`${r.result}#${this.instanceId}`);
      }
    }
    const { dispatcher, registry } = await boot(PerRequest);
    expect(registry.appHooks('transform_tool_result')).toHaveLength(1);
    const first = await dispatcher.transform('transform_tool_result', new ToolResultContext({ ...toolInit, result: 'one' }));
    const second = await dispatcher.transform('transform_tool_result', new ToolResultContext({ ...toolInit, result: 'two' }));
    expect(seen).toHaveLength(2);
    expect(seen[0]!.id).not.toBe(seen[1]!.id);
    expect(first.result).toBe(`one#${seen[0]!.id}`);
    expect(second.result).toBe(`two#${seen[1]!.id}`);
  });

  it('DESIGN §2: a request-scoped hook sees the dispatched payload as its REQUEST and can inject singletons', async () => {
    @Injectable()
    class Counter {
      count = 0;
    }
    const requests: unknown[] = [];
    const args: unknown[] = [];
    @Injectable({ scope: Scope.REQUEST })
    class PerRequestObserver {
      constructor(
        @Inject(REQUEST) private readonly request: unknown,
        private readonly counter: Counter,
      ) {}
      @OnHook('afterStep')
      seen(event: AfterStepEvent) {
        this.counter.count++;
        requests.push(this.request);
        args.push(event);
      }
    }
    const { moduleRef, dispatcher } = await boot(Counter, PerRequestObserver);
    const e1 = step(1);
    const e2 = step(2);
    await dispatcher.dispatch('afterStep', e1);
    await dispatcher.dispatch('afterStep', e2);
    expect(moduleRef.get(Counter).count).toBe(2);
    expect(args).toHaveLength(2);
    expect((args[0] as AfterStepEvent).stepIndex).toBe(1);
    expect((args[1] as AfterStepEvent).stepIndex).toBe(2);
    expect(requests).toHaveLength(2);
    expect((requests[0] as { hookPayload?: AfterStepEvent }).hookPayload?.stepIndex).toBe(1);
    expect((requests[1] as { hookPayload?: AfterStepEvent }).hookPayload?.stepIndex).toBe(2);
    expect(requests[0]).not.toBe(requests[1]);
  });

  it('DESIGN §2: a request-scoped hook that throws follows failure_policy like any other', async () => {
    @Injectable({ scope: Scope.REQUEST })
    class PerRequestFail {
      @OnHook('after_tool_call')
      boom(): never {
        throw new RangeError('x');
      }
    }
    const { dispatcher } = await boot(PerRequestFail);
    await expect(dispatcher.dispatch('after_tool_call', callCtx())).rejects.toMatchObject({ name: 'HookFailedError', hookId: 'PerRequestFail.boom' });
  });

  it('DESIGN §2: a request-scoped controller hook gets a fresh instance per dispatch', async () => {
    let nextId = 0;
    const ids: number[] = [];
    @Controller({ path: 'scoped', scope: Scope.REQUEST })
    class ScopedController {
      readonly instanceId = ++nextId;
      @OnHook('afterStep')
      seen() {
        ids.push(this.instanceId);
      }
    }
    const moduleRef = await Test.createTestingModule({ imports: [AgentHooksModule.forRoot({ configFile: false })], controllers: [ScopedController] }).compile();
    opened.push(moduleRef);
    await moduleRef.init();
    await moduleRef.get(HookDispatcher).dispatch('afterStep', step(1));
    await moduleRef.get(HookDispatcher).dispatch('afterStep', step(2));
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
  });

  it('DESIGN §2: a singleton hook is always called on the same instance', async () => {
    const instances = new Set<object>();
    @Injectable()
    class Singleton {
      @OnHook('afterStep')
      seen() {
        instances.add(this);
      }
    }
    const { moduleRef, dispatcher } = await boot(Singleton);
    await dispatcher.dispatch('afterStep', step());
    await dispatcher.dispatch('afterStep', step());
    expect([...instances]).toEqual([moduleRef.get(Singleton)]);
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('discovery: bad @OnHook usage is rejected at bootstrap, naming class and method', () => {
  async function bootError(provider: Type): Promise<Error> {
    const moduleRef = await compile(provider);
    const err = await moduleRef.init().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    return err as Error;
  }

  it('DESIGN §6: an unknown point fails the bootstrap', async () => {
    @Injectable()
    class UnknownPoint {
      @OnHook('before_anything' as HookPoint)
      handler() {}
    }
    const err = await bootError(UnknownPoint);
    expect(err).toBeInstanceOf(HookConfigurationError);
    expect(err.message).toContain('UnknownPoint.handler');
    expect(err.message).toContain('before_anything');
  });

  it('W5: a matcher on a non-tool point fails the bootstrap', async () => {
    @Injectable()
    class StepMatcher {
      @OnHook('afterStep', { matcher: '^fs/' })
      onStep() {}
    }
    const err = await bootError(StepMatcher);
    expect(err).toBeInstanceOf(HookConfigurationError);
    expect(err.message).toContain('StepMatcher.onStep');
    expect(err.message).toContain('afterStep');
  });

  it('W5: a matcher on a non-tool engine point (on_run_start) fails the bootstrap', async () => {
    @Injectable()
    class RunMatcher {
      @OnHook('on_run_start', { matcher: 'x' })
      start() {}
    }
    const err = await bootError(RunMatcher);
    expect(err.message).toContain('RunMatcher.start');
  });

  it.each(['', '*'])("W5: @OnHook with matcher '%s' on a non-tool point fails the bootstrap", async (matcher) => {
    @Injectable()
    class OpenStep {
      @OnHook('afterStep', { matcher }) a() {}
    }
    const err = await bootError(OpenStep);
    expect(err).toBeInstanceOf(HookConfigurationError);
    expect(err.message).toContain('OpenStep.a: matcher');
    expect(err.message).toContain('tool points only');
  });

  it('W5: an omitted, empty or * matcher is accepted on a tool point and matches every tool', async () => {
    @Injectable()
    class Fine {
      @OnHook('afterToolCall', { matcher: '*' }) a() {}
      @OnHook('afterToolCall', { matcher: '' }) b() {}
      @OnHook('afterStep') c() {}
    }
    const { registry } = await boot(Fine);
    expect(registry.appHooks('afterToolCall')).toHaveLength(2);
    expect(registry.appHooks('afterToolCall').every((h) => h.matcher === undefined)).toBe(true);
    expect(registry.appHooks('afterStep')).toHaveLength(1);
  });

  it('W5: an invalid regex fails the bootstrap', async () => {
    @Injectable()
    class BadRegex {
      @OnHook('afterToolCall', { matcher: '^fs/(read' })
      audit() {}
    }
    const err = await bootError(BadRegex);
    expect(err).toBeInstanceOf(HookConfigurationError);
    expect(err.message).toContain('BadRegex.audit');
    // G6: the field is named, the pattern is never echoed.
    expect(err.message).toContain('matcher: invalid regular expression');
    expect(err.message).not.toContain('^fs/(read');
  });

  it('E4/E6: a bad failurePolicy fails the bootstrap', async () => {
    @Injectable()
    class BadPolicy {
      @OnHook('after_tool_call', { failurePolicy: 'ignore' as never })
      audit() {}
    }
    const err = await bootError(BadPolicy);
    expect(err).toBeInstanceOf(HookConfigurationError);
    expect(err.message).toContain('BadPolicy.audit');
    expect(err.message).toContain('failurePolicy');
  });

  it('DESIGN §6: bad usage on a factory-provided instance names its class, not the factory', async () => {
    class MadeByFactory {
      @OnHook('onComplete', { matcher: '^fs/' })
      done() {}
    }
    const moduleRef = await Test.createTestingModule({
      imports: [AgentHooksModule.forRoot({ configFile: false })],
      providers: [{ provide: 'MADE', useFactory: () => new MadeByFactory() }],
    }).compile();
    opened.push(moduleRef);
    await expect(moduleRef.init()).rejects.toThrow(/MadeByFactory\.done/);
  });

  it('DESIGN §6: a bad onError, timeoutMs or order fails the bootstrap too', async () => {
    @Injectable()
    class BadOnError {
      @OnHook('beforeToolCall', { onError: 'deny' as never })
      policy() {}
    }
    expect((await bootError(BadOnError)).message).toContain('BadOnError.policy');
    @Injectable()
    class BadTimeout {
      @OnHook('afterStep', { timeoutMs: -1 })
      slow() {}
    }
    expect((await bootError(BadTimeout)).message).toContain('BadTimeout.slow');
    @Injectable()
    class BadOrder {
      @OnHook('afterStep', { order: Number.NaN })
      x() {}
    }
    expect((await bootError(BadOrder)).message).toContain('BadOrder.x');
  });

  it('DESIGN §6: a failed bootstrap registers none of the hooks (nothing half-registered)', async () => {
    @Injectable()
    class Good {
      @OnHook('afterStep')
      fine() {}
    }
    @Injectable()
    class Bad {
      @OnHook('afterStep', { matcher: 'x' })
      broken() {}
    }
    const moduleRef = await compile(Good, Bad);
    await expect(moduleRef.init()).rejects.toThrow(/Bad\.broken/);
    expect(moduleRef.get(HookRegistry).appHooks('afterStep')).toHaveLength(0);
  });

  it('DESIGN §6: createNestApplication().init() rejects on bad @OnHook usage', async () => {
    @Injectable()
    class AppBad {
      @OnHook('nonsense' as HookPoint)
      handler() {}
    }
    const moduleRef = await compile(AppBad);
    const app = moduleRef.createNestApplication({ logger: false });
    opened.push(app);
    await expect(app.init()).rejects.toThrow(/AppBad\.handler/);
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('discovery: readiness', () => {
  it('DESIGN §2: HookReadinessWatcher resolves only after bootstrap', async () => {
    @Injectable()
    class Hooked {
      @OnHook('afterStep')
      seen() {}
    }
    const moduleRef = await compile(Hooked);
    const watcher = moduleRef.get(HookReadinessWatcher);
    // A settled promise runs its callbacks before the next macrotask: setImmediate marks "still pending".
    const state = () =>
      Promise.race([watcher.waitUntilReady().then(() => 'ready'), new Promise<string>((resolve) => setImmediate(() => resolve('pending')))]);
    expect(await state()).toBe('pending');
    await moduleRef.init();
    expect(await state()).toBe('ready');
    expect(moduleRef.get(HookRegistry).appHooks('afterStep')).toHaveLength(1);
  });

  it('DESIGN §2: HookReadinessWatcher rejects with the binding error when bootstrap fails', async () => {
    @Injectable()
    class Broken {
      @OnHook('afterStep', { matcher: '(' })
      seen() {}
    }
    const moduleRef = await compile(Broken);
    const watcher = moduleRef.get(HookReadinessWatcher);
    const initError = await moduleRef.init().catch((e: unknown) => e);
    await expect(watcher.waitUntilReady()).rejects.toBe(initError);
  });
});
