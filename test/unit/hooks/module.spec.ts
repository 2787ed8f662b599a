/**
 * `AgentHooksModule` wiring (DESIGN §6, §10): app isolation, `forRootAsync`, `isGlobal`, and the
 * `@nestjs/event-emitter` bridge (`agent-hooks.<point>`).
 */
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Inject, Injectable, Logger, Module, type Type } from '@nestjs/common';
import { EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  AgentHooksModule,
  HookDispatcher,
  HookRegistry,
  OnHook,
  RunContext,
  ToolCallContext,
  ToolResultContext,
  type AfterStepEvent,
  type AgentHooksModuleOptions,
  type HookInvocation,
} from '../../../src/index.js';
import { AGENT_HOOKS_MODULE_OPTIONS } from '../../../src/agent-hooks.module-definition.js';

const opened: TestingModule[] = [];

async function boot(imports: unknown[], providers: Type[] = []): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({ imports: imports as never[], providers }).compile();
  opened.push(moduleRef);
  await moduleRef.init();
  return moduleRef;
}

beforeEach(() => {
  jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
});

afterEach(async () => {
  jest.restoreAllMocks();
  while (opened.length > 0) await opened.pop()!.close();
});

const toolInit = { runId: 'run-1', toolCallId: 'call-1', identifier: 'fs', apiName: 'readFile', provider: 'local' };
const step = (stepIndex: number, operationId = 'op-shared') => ({ stepIndex, operationId }) as AfterStepEvent;

// ---------------------------------------------------------------------------------------------------------
describe('two app instances in one process are isolated', () => {
  it('DESIGN §6: each app has its own registry and dispatcher; dispatch in one never calls the other handlers', async () => {
    const calls: string[] = [];
    @Injectable()
    class HooksA {
      @OnHook('afterStep')
      seen(e: AfterStepEvent) {
        calls.push(`A:${e.stepIndex}`);
      }
    }
    @Injectable()
    class HooksB {
      @OnHook('afterStep')
      seen(e: AfterStepEvent) {
        calls.push(`B:${e.stepIndex}`);
      }
    }
    const a = await boot([AgentHooksModule.forRoot({ configFile: false })], [HooksA]);
    const b = await boot([AgentHooksModule.forRoot({ configFile: false })], [HooksB]);
    expect(a.get(HookDispatcher)).not.toBe(b.get(HookDispatcher));
    expect(a.get(HookRegistry)).not.toBe(b.get(HookRegistry));
    expect(a.get(HookRegistry).appHooks('afterStep').map((h) => h.id)).toEqual(['HooksA.seen']);
    expect(b.get(HookRegistry).appHooks('afterStep').map((h) => h.id)).toEqual(['HooksB.seen']);

    await a.get(HookDispatcher).dispatch('afterStep', step(1));
    expect(calls).toEqual(['A:1']);
    await b.get(HookDispatcher).dispatch('afterStep', step(2));
    expect(calls).toEqual(['A:1', 'B:2']);
  });

  it('DESIGN §6: the same decorated class in two apps gets two instances, each called only by its own app', async () => {
    @Injectable()
    class Shared {
      readonly seen: number[] = [];
      @OnHook('after_tool_call')
      audit(inv: HookInvocation) {
        this.seen.push(inv.payloadAs(ToolCallContext).latencyMs);
      }
    }
    const a = await boot([AgentHooksModule.forRoot({ configFile: false })], [Shared]);
    const b = await boot([AgentHooksModule.forRoot({ configFile: false })], [Shared]);
    expect(a.get(Shared)).not.toBe(b.get(Shared));
    await a.get(HookDispatcher).dispatch('after_tool_call', new ToolCallContext({ ...toolInit, status: 'ok', latencyMs: 11 }));
    await b.get(HookDispatcher).dispatch('after_tool_call', new ToolCallContext({ ...toolInit, status: 'ok', latencyMs: 22 }));
    expect(a.get(Shared).seen).toEqual([11]);
    expect(b.get(Shared).seen).toEqual([22]);
  });

  it('A1/A4: caller hooks registered in one app are invisible in the other, even for the same operation id', async () => {
    const a = await boot([AgentHooksModule.forRoot({ configFile: false })]);
    const b = await boot([AgentHooksModule.forRoot({ configFile: false })]);
    const calls: string[] = [];
    a.get(HookRegistry).register('op-shared', [{ id: 'caller-a', type: 'afterStep', handler: (e) => void calls.push(`A:${e.stepIndex}`) }]);

    expect(a.get(HookRegistry).hasCallerHooks('op-shared')).toBe(true);
    expect(b.get(HookRegistry).hasCallerHooks('op-shared')).toBe(false);
    expect(b.get(HookRegistry).operationCount).toBe(0);
    expect(a.get(HookDispatcher).hasHooks('afterStep', 'op-shared')).toBe(true);
    expect(b.get(HookDispatcher).hasHooks('afterStep', 'op-shared')).toBe(false);

    await b.get(HookDispatcher).dispatch('afterStep', step(1));
    expect(calls).toEqual([]);
    await a.get(HookDispatcher).dispatch('afterStep', step(2));
    expect(calls).toEqual(['A:2']);

    // Unregistering in B does not touch A.
    b.get(HookRegistry).unregister('op-shared');
    expect(a.get(HookRegistry).hasCallerHooks('op-shared')).toBe(true);
    await a.get(HookDispatcher).dispatch('afterStep', step(3));
    expect(calls).toEqual(['A:2', 'A:3']);
  });

  it('DESIGN §6: closing one app leaves the other working', async () => {
    const calls: string[] = [];
    @Injectable()
    class Hooks {
      @OnHook('afterStep')
      seen(e: AfterStepEvent) {
        calls.push(e.operationId);
      }
    }
    const a = await Test.createTestingModule({ imports: [AgentHooksModule.forRoot({ configFile: false })], providers: [Hooks] }).compile();
    await a.init();
    const b = await boot([AgentHooksModule.forRoot({ configFile: false })], [Hooks]);
    await a.close();
    await b.get(HookDispatcher).dispatch('afterStep', step(1, 'op-b'));
    expect(calls).toEqual(['op-b']);
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('forRoot / forRootAsync / isGlobal', () => {
  it('DESIGN §6: forRoot exposes its options under AGENT_HOOKS_MODULE_OPTIONS', async () => {
    const options: AgentHooksModuleOptions = { database: 'sqlite::memory:', mode: 'local', configFile: false };
    const moduleRef = await boot([AgentHooksModule.forRoot(options)]);
    expect(moduleRef.get(AGENT_HOOKS_MODULE_OPTIONS, { strict: false })).toMatchObject(options);
  });

  it('DESIGN §6: forRootAsync with imports, inject and useFactory works', async () => {
    const CONFIG = Symbol('CONFIG');
    @Module({ providers: [{ provide: CONFIG, useValue: { db: 'sqlite::memory:', mode: 'local' as const } }], exports: [CONFIG] })
    class ConfigModule {}
    const factory = jest.fn((cfg: { db: string; mode: 'local' }) => ({ database: cfg.db, mode: cfg.mode, configFile: false }));
    const calls: number[] = [];
    @Injectable()
    class Hooks {
      @OnHook('afterStep')
      seen(e: AfterStepEvent) {
        calls.push(e.stepIndex);
      }
    }
    const moduleRef = await boot(
      [AgentHooksModule.forRootAsync({ imports: [ConfigModule], inject: [CONFIG], useFactory: factory as never })],
      [Hooks],
    );
    expect(factory).toHaveBeenCalledTimes(1);
    expect(factory.mock.calls[0]![0]).toEqual({ db: 'sqlite::memory:', mode: 'local' });
    expect(moduleRef.get(AGENT_HOOKS_MODULE_OPTIONS, { strict: false })).toEqual({ database: 'sqlite::memory:', mode: 'local', configFile: false });
    await moduleRef.get(HookDispatcher).dispatch('afterStep', step(5));
    expect(calls).toEqual([5]);
  });

  it('DESIGN §6: forRootAsync with an async factory works', async () => {
    const moduleRef = await boot([
      AgentHooksModule.forRootAsync({ useFactory: async () => ({ mode: 'queue' as const, redis: 'redis://127.0.0.1:6379', database: 'postgres://127.0.0.1/unused', queue: { worker: false }, configFile: false as const }) }),
    ]);
    expect(moduleRef.get(AGENT_HOOKS_MODULE_OPTIONS, { strict: false })).toEqual({ mode: 'queue', redis: 'redis://127.0.0.1:6379', database: 'postgres://127.0.0.1/unused', queue: { worker: false }, configFile: false });
  });

  it('issue 8: queue mode on the embedded SQLite default is refused with a clear error (workers must share the database)', async () => {
    await expect(boot([AgentHooksModule.forRoot({ mode: 'queue', configFile: false })])).rejects.toThrow(/mode 'queue' needs a shared database/);
  });

  it('DESIGN §6: isGlobal: true makes HookDispatcher injectable from a sibling module without importing', async () => {
    @Injectable()
    class Consumer {
      constructor(@Inject(HookDispatcher) readonly dispatcher: HookDispatcher) {}
    }
    @Module({ providers: [Consumer], exports: [Consumer] })
    class SiblingModule {}
    const moduleRef = await boot([AgentHooksModule.forRoot({ isGlobal: true, configFile: false }), SiblingModule]);
    expect(moduleRef.get(Consumer).dispatcher).toBe(moduleRef.get(HookDispatcher));
  });

  it('DESIGN §6: isGlobal also works with forRootAsync', async () => {
    @Injectable()
    class Consumer {
      constructor(@Inject(HookRegistry) readonly registry: HookRegistry) {}
    }
    @Module({ providers: [Consumer] })
    class SiblingModule {}
    const moduleRef = await boot([AgentHooksModule.forRootAsync({ isGlobal: true, useFactory: () => ({ configFile: false as const }) }), SiblingModule]);
    expect(moduleRef.get(Consumer, { strict: false }).registry).toBe(moduleRef.get(HookRegistry));
  });

  it('DESIGN §6: without isGlobal, a sibling module that does not import the module cannot inject HookDispatcher', async () => {
    @Injectable()
    class Consumer {
      constructor(@Inject(HookDispatcher) readonly dispatcher: HookDispatcher) {}
    }
    @Module({ providers: [Consumer] })
    class SiblingModule {}
    await expect(Test.createTestingModule({ imports: [AgentHooksModule.forRoot({ configFile: false }), SiblingModule] }).compile()).rejects.toThrow(/HookDispatcher/);
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('the @nestjs/event-emitter bridge (DESIGN §10)', () => {
  it('DESIGN §10: @OnEvent("agent-hooks.after_tool_call") and @OnEvent("agent-hooks.afterStep") receive the dispatched payload', async () => {
    const received: Array<[string, unknown]> = [];
    @Injectable()
    class Listeners {
      @OnEvent('agent-hooks.after_tool_call')
      onEngine(payload: unknown) {
        received.push(['after_tool_call', payload]);
      }
      @OnEvent('agent-hooks.afterStep')
      onAgent(payload: unknown) {
        received.push(['afterStep', payload]);
      }
    }
    const moduleRef = await boot([EventEmitterModule.forRoot(), AgentHooksModule.forRoot({ configFile: false })], [Listeners]);
    const dispatcher = moduleRef.get(HookDispatcher);
    const ctx = new ToolCallContext({ ...toolInit, status: 'ok', latencyMs: 3 });
    const event = step(9, 'op-ee');
    await dispatcher.dispatch('after_tool_call', ctx);
    await dispatcher.dispatch('afterStep', event);
    expect(received).toHaveLength(2);
    expect(received[0]![0]).toBe('after_tool_call');
    expect(received[0]![1]).toBe(ctx);
    expect(received[1]![0]).toBe('afterStep');
    expect(received[1]![1]).toBe(event);
  });

  it('DESIGN §10: the bridge fires alongside @OnHook handlers, and only for the named point', async () => {
    const order: string[] = [];
    @Injectable()
    class Both {
      @OnHook('afterStep')
      hook() {
        order.push('hook');
      }
      @OnEvent('agent-hooks.afterStep')
      listener() {
        order.push('listener');
      }
      @OnEvent('agent-hooks.onComplete')
      other() {
        order.push('other');
      }
    }
    const moduleRef = await boot([EventEmitterModule.forRoot(), AgentHooksModule.forRoot({ configFile: false })], [Both]);
    await moduleRef.get(HookDispatcher).dispatch('afterStep', step(1));
    expect(order.sort()).toEqual(['hook', 'listener']);
  });

  it('DESIGN §10: transform points are bridged too (observe-only: listeners cannot change the result)', async () => {
    const received: unknown[] = [];
    @Injectable()
    class Listener {
      @OnEvent('agent-hooks.transform_tool_result')
      seen(payload: unknown) {
        received.push(payload);
        return new ToolResultContext({ ...toolInit, result: 'from a listener' });
      }
    }
    const moduleRef = await boot([EventEmitterModule.forRoot(), AgentHooksModule.forRoot({ configFile: false })], [Listener]);
    const input = new ToolResultContext({ ...toolInit, result: 'raw' });
    await expect(moduleRef.get(HookDispatcher).transform('transform_tool_result', input)).resolves.toBe(input);
    expect(received).toEqual([input]);
  });

  it('DESIGN §10: wildcard listeners (agent-hooks.*) work when the emitter uses wildcards', async () => {
    const received: unknown[] = [];
    @Injectable()
    class Wild {
      @OnEvent('agent-hooks.*')
      any(payload: unknown) {
        received.push(payload);
      }
    }
    const moduleRef = await boot([EventEmitterModule.forRoot({ wildcard: true }), AgentHooksModule.forRoot({ configFile: false })], [Wild]);
    received.length = 0; // bootstrap already announced on_engine_start
    const run = new RunContext({ runId: 'r' });
    await moduleRef.get(HookDispatcher).transform('on_run_start', run);
    await moduleRef.get(HookDispatcher).dispatch('afterStep', step(2));
    expect(received).toHaveLength(2);
    expect(received[0]).toBe(run);
  });

  it('DESIGN §10: without EventEmitterModule, dispatch still works (the emitter is optional)', async () => {
    const calls: number[] = [];
    @Injectable()
    class Hooks {
      @OnHook('afterStep')
      seen(e: AfterStepEvent) {
        calls.push(e.stepIndex);
      }
    }
    const moduleRef = await boot([AgentHooksModule.forRoot({ configFile: false })], [Hooks]);
    await expect(moduleRef.get(HookDispatcher).dispatch('afterStep', step(4))).resolves.toBeUndefined();
    expect(calls).toEqual([4]);
  });
});
