/**
 * DESIGN §6 "Types": checked by the compiler (`npm run typecheck` covers test/), so these tests pass or
 * fail at compile time; each `@ts-expect-error` line is a use that must not compile. The `it` bodies
 * also run, so a broken decorator at run time fails here too.
 */
import { expectTypeOf } from 'expect-type';
import type { HookArgument } from '../../../src/hooks/on-hook.decorator.js';
import {
  HookInvocation,
  OnHook,
  RunContext,
  ToolResultContext,
  type AfterStepEvent,
  type AfterToolCallEvent,
  type AgentHook,
  type AgentRuntime,
  type BeforeToolCallEvent,
  type ExecAgentInput,
  type HookDecision,
  type OnCompleteEvent,
  type ToolResult,
} from '../../../src/index.js';

type ExecAgent = AgentRuntime['execAgent'];

describe('DESIGN §6 AgentHook is a union discriminated by type', () => {
  it('an inline handler gets the event of its point', () => {
    const hooks: AgentHook[] = [
      { id: 'after', type: 'afterToolCall', handler: (e) => e.result },
      { id: 'before', type: 'beforeToolCall', handler: (e) => void e.mock({ content: 'mocked', success: true }) },
      { id: 'step', type: 'afterStep', handler: (e) => e.toolResults.length },
      { id: 'done', type: 'onComplete', handler: (e) => e.reason },
    ];
    const inputs: Parameters<ExecAgent>[0] = { agentId: 'a', prompt: 'p', hooks: [{ id: 'x', type: 'afterToolCall', handler: (e) => e.result.content }] };

    expect(hooks).toHaveLength(4);
    expect(inputs.hooks).toHaveLength(1);
    expectTypeOf<Parameters<NonNullable<AgentHook<'afterToolCall'>['handler']>>[0]>().toEqualTypeOf<AfterToolCallEvent>();
    expectTypeOf<Parameters<NonNullable<AgentHook<'beforeToolCall'>['handler']>>[0]>().toEqualTypeOf<BeforeToolCallEvent>();
    expectTypeOf<Parameters<NonNullable<AgentHook<'onComplete'>['handler']>>[0]>().toEqualTypeOf<OnCompleteEvent>();
    expectTypeOf<AgentHook['type']>().toEqualTypeOf<NonNullable<ExecAgentInput['hooks']>[number]['type']>();
  });

  it('a beforeToolCall / afterToolCall control handler may return a decision, sync or async', () => {
    const deny: HookDecision = { decision: 'deny', reason: 'policy' };
    const hooks: AgentHook[] = [
      { id: 'policy', type: 'beforeToolCall', onError: 'block', handler: (e) => (e.identifier === 'fs' ? deny : { decision: 'allow' }) },
      { id: 'async-policy', type: 'afterToolCall', onError: 'continue', handler: async (e) => (e.result.success ? undefined : deny) },
    ];
    expect(hooks.map((h) => h.type)).toEqual(['beforeToolCall', 'afterToolCall']);
  });

  it('does not compile: a handler reading another point’s fields, an engine point, a wrong narrowed point', () => {
    const wrong: AgentHook[] = [
      // @ts-expect-error afterStep events carry no tool result
      { id: 'a', type: 'afterStep', handler: (e) => e.result },
      // @ts-expect-error only beforeToolCall handlers get mock()
      { id: 'b', type: 'afterToolCall', handler: (e) => e.mock({ content: 'x', success: true }) },
      // @ts-expect-error engine-family points are not caller hooks
      { id: 'c', type: 'on_run_end', handler: () => undefined },
      // @ts-expect-error a handler annotated with another point's event
      { id: 'd', type: 'afterToolCall', handler: (e: BeforeToolCallEvent) => e.mock({ content: 'x', success: true }) },
    ];
    // @ts-expect-error AgentHook<'afterStep'> holds afterStep hooks only
    const narrowed: AgentHook<'afterStep'> = { id: 'e', type: 'onComplete', handler: () => undefined };
    expect([wrong, narrowed]).toHaveLength(2);
  });
});

describe('DESIGN §6 @OnHook is a typed method decorator', () => {
  it('HookArgument: agent points pass the event, engine points a HookInvocation of their context', () => {
    expectTypeOf<HookArgument<'afterToolCall'>>().toEqualTypeOf<AfterToolCallEvent>();
    expectTypeOf<HookArgument<'beforeToolCall'>>().toEqualTypeOf<BeforeToolCallEvent>();
    expectTypeOf<HookArgument<'transform_tool_result'>>().toEqualTypeOf<HookInvocation<ToolResultContext>>();
    expectTypeOf<HookArgument<'on_run_start'>>().toEqualTypeOf<HookInvocation<RunContext>>();
    expectTypeOf<HookArgument<'on_run_error'>>().toEqualTypeOf<HookInvocation<Error>>();
  });

  it('compiles: a method whose parameter accepts the point’s argument (or takes none), stacked, with any return', () => {
    class Hooks {
      @OnHook('afterToolCall', { matcher: '^fs/readFile$' })
      audit(event: AfterToolCallEvent): void {
        void event.result.content;
      }

      @OnHook('beforeToolCall')
      maybeMock(event: BeforeToolCallEvent): void {
        event.mock({ content: 'mocked', success: true } satisfies ToolResult);
      }

      @OnHook('beforeToolCall', { onError: 'block' })
      policy(): HookDecision {
        return { decision: 'deny', reason: 'no' };
      }

      @OnHook('transform_tool_result', { failurePolicy: 'warn' })
      trim(inv: HookInvocation): ToolResultContext {
        return inv.payloadAs(ToolResultContext);
      }

      @OnHook('on_run_start')
      async typed(inv: HookInvocation<RunContext>): Promise<RunContext> {
        return inv.payload.replace({ metadata: {} });
      }

      // A parameter wide enough for both arguments: the agent event and the engine invocation.
      @OnHook('afterStep')
      @OnHook('after_tool_call')
      both(arg: AfterStepEvent | HookInvocation): void {
        void arg;
      }
    }
    const instance = new Hooks();
    // The decorator keeps the method's own signature.
    expectTypeOf(instance.trim).toEqualTypeOf<(inv: HookInvocation) => ToolResultContext>();
    expectTypeOf(instance.typed).returns.toEqualTypeOf<Promise<RunContext>>();
  });

  it('does not compile: a parameter that does not accept the point’s argument', () => {
    class Wrong {
      // @ts-expect-error afterToolCall passes an AfterToolCallEvent, not a BeforeToolCallEvent
      @OnHook('afterToolCall')
      a(event: BeforeToolCallEvent): void {
        void event;
      }

      // @ts-expect-error engine points pass a HookInvocation, not the bare context
      @OnHook('transform_tool_result')
      b(context: ToolResultContext): ToolResultContext {
        return context;
      }

      // @ts-expect-error agent points pass the event, not a HookInvocation
      @OnHook('afterStep')
      c(inv: HookInvocation): void {
        void inv;
      }

      // @ts-expect-error transform_tool_result carries a ToolResultContext, not a RunContext
      @OnHook('transform_tool_result')
      d(inv: HookInvocation<RunContext>): void {
        void inv;
      }

      // @ts-expect-error the dispatcher passes one argument; a second required one would be undefined
      @OnHook('afterStep')
      e(event: AfterStepEvent, extra: string): void {
        void [event, extra];
      }
    }
    expect(new Wrong()).toBeInstanceOf(Wrong);
  });
});
