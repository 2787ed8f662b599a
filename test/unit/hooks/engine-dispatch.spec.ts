/**
 * Engine-family dispatch (SPEC E2, E3, E6, E7, S1, S3; DESIGN §3, §6) through `HookDispatcher.transform` and
 * `HookDispatcher.dispatch`, with hooks declared by `@OnHook` on real Nest providers.
 */
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Injectable, Logger, type Type } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { stampBrands } from '../../../src/hooks/context-brand.js';
import {
  AgentHooksModule,
  AuthContext,
  EngineContext,
  HookDispatcher,
  HookFailedError,
  HookInvocation,
  HookTimeoutError,
  McpRequestContext,
  McpResponseContext,
  OnHook,
  RunContext,
  RunEndContext,
  ToolCallContext,
  ToolRequestContext,
  ToolResultContext,
  type HookErrorEvent,
  type HookOutcomeRecord,
} from '../../../src/index.js';
import { EngineLifecycle } from '../../../src/runtime/engine-lifecycle.js';
import { pause } from '../../support/eventually.js';

const opened: TestingModule[] = [];

async function boot(...providers: Type[]): Promise<{ moduleRef: TestingModule; dispatcher: HookDispatcher }> {
  // The engine lifecycle would fire on_engine_start at bootstrap; these tests dispatch every point themselves.
  const moduleRef = await Test.createTestingModule({ imports: [AgentHooksModule.forRoot({ configFile: false })], providers })
    .overrideProvider(EngineLifecycle)
    .useValue({})
    .compile();
  opened.push(moduleRef);
  await moduleRef.init();
  return { moduleRef, dispatcher: moduleRef.get(HookDispatcher) };
}

let warn: jest.SpiedFunction<Logger['warn']>;

beforeEach(() => {
  warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
});

afterEach(async () => {
  jest.restoreAllMocks();
  while (opened.length > 0) await opened.pop()!.close();
});

function warnLines(): string[] {
  return warn.mock.calls.map((args) => args.map((a) => String(a)).join(' '));
}

const toolInit = { runId: 'run-1', toolCallId: 'call-1', identifier: 'fs', apiName: 'readFile', provider: 'local' };
const resultCtx = (result = 'raw') => new ToolResultContext({ ...toolInit, result });
const callCtx = () => new ToolCallContext({ ...toolInit, status: 'ok', latencyMs: 7 });
const mcpReq = () => new McpRequestContext({ serverId: 'context7', url: 'https://mcp.example/mcp', method: 'callTool' });

/** A secret-looking message that must never reach a log line (S1, S3). */
const SECRET_MESSAGE = 'user typed: my password is hunter2';

class AuditError extends Error {
  override readonly name = 'AuditError';
}

// ---------------------------------------------------------------------------------------------------------
describe('E2 on_run_start: may return an updated RunContext', () => {
  it('E2: on_run_start returning a new RunContext is used, and the next hook sees it', async () => {
    const seen: RunContext[] = [];
    @Injectable()
    class RunStart {
      @OnHook('on_run_start', { order: 1 })
      enrich(inv: HookInvocation) {
        return inv.payloadAs(RunContext).replace({ organizationId: 'org-9', metadata: { enriched: true } });
      }
      @OnHook('on_run_start', { order: 2 })
      observe(inv: HookInvocation) {
        seen.push(inv.payloadAs(RunContext));
      }
    }
    const { dispatcher } = await boot(RunStart);
    const input = new RunContext({ runId: 'run-1', userId: 'u1' });
    const out = await dispatcher.transform('on_run_start', input);
    expect(out).not.toBe(input);
    expect(out.runId).toBe('run-1');
    expect(out.userId).toBe('u1');
    expect(out.organizationId).toBe('org-9');
    expect(out.metadata).toEqual({ enriched: true });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBe(out);
    expect(input.organizationId).toBeUndefined();
  });

  it('E2: on_run_start returning nothing keeps the input (same reference)', async () => {
    const calls: string[] = [];
    @Injectable()
    class RunStart {
      @OnHook('on_run_start')
      audit(inv: HookInvocation) {
        calls.push(inv.payloadAs(RunContext).runId);
      }
    }
    const { dispatcher } = await boot(RunStart);
    const input = new RunContext({ runId: 'run-1' });
    await expect(dispatcher.transform('on_run_start', input)).resolves.toBe(input);
    expect(calls).toEqual(['run-1']);
  });

  it('E2/DESIGN §3: a returned RunContext with a different runId keeps the original runId (other fields used)', async () => {
    const auth = new AuthContext({ inboundAccessToken: 'tok', scopes: ['s'] });
    @Injectable()
    class RunStart {
      @OnHook('on_run_start')
      hijack() {
        return new RunContext({ runId: 'run-EVIL', userId: 'u2', authContext: auth, metadata: { k: 'v' } });
      }
    }
    const { dispatcher } = await boot(RunStart);
    const out = await dispatcher.transform('on_run_start', new RunContext({ runId: 'run-1', userId: 'u1' }));
    expect(out.runId).toBe('run-1');
    expect(out.userId).toBe('u2');
    expect(out.authContext).toBe(auth);
    expect(out.metadata).toEqual({ k: 'v' });
  });

  it('E2: on_run_start returning a wrong type (plain object, another context) is a hook failure', async () => {
    @Injectable()
    class PlainObject {
      @OnHook('on_run_start')
      bad() {
        return { runId: 'run-1', userId: 'u2' };
      }
    }
    const first = await boot(PlainObject);
    const err = await first.dispatcher.transform('on_run_start', new RunContext({ runId: 'run-1' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HookFailedError);
    expect((err as HookFailedError).point).toBe('on_run_start');
    expect((err as HookFailedError).hookId).toBe('PlainObject.bad');

    @Injectable()
    class OtherContext {
      @OnHook('on_run_start')
      bad() {
        return new EngineContext({ systemName: 's' });
      }
    }
    const second = await boot(OtherContext);
    await expect(second.dispatcher.transform('on_run_start', new RunContext({ runId: 'run-1' }))).rejects.toBeInstanceOf(HookFailedError);
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('E2 before_mcp_request: may return the request with added headers', () => {
  it('E2: before_mcp_request may add headers; the input is not changed', async () => {
    @Injectable()
    class McpAuth {
      @OnHook('before_mcp_request')
      inject(inv: HookInvocation) {
        const req = inv.payloadAs(McpRequestContext);
        return req.serverId === 'context7' ? req.withHeaders({ authorization: 'Bearer t' }) : undefined;
      }
    }
    const { dispatcher } = await boot(McpAuth);
    const input = mcpReq();
    const out = await dispatcher.transform('before_mcp_request', input);
    expect(out.headers).toEqual({ authorization: 'Bearer t' });
    expect(input.headers).toEqual({});
    const other = new McpRequestContext({ serverId: 'deepwiki', url: 'https://x/mcp', method: 'connect' });
    await expect(dispatcher.transform('before_mcp_request', other)).resolves.toBe(other);
  });

  it('E2: before_mcp_request hooks chain: headers from each hook accumulate', async () => {
    @Injectable()
    class McpHeaders {
      @OnHook('before_mcp_request', { order: 1 })
      a(inv: HookInvocation) {
        return inv.payloadAs(McpRequestContext).withHeaders({ 'x-a': '1' });
      }
      @OnHook('before_mcp_request', { order: 2 })
      b(inv: HookInvocation) {
        return inv.payloadAs(McpRequestContext).withHeaders({ 'x-b': '2' });
      }
    }
    const { dispatcher } = await boot(McpHeaders);
    const out = await dispatcher.transform('before_mcp_request', mcpReq());
    expect(out.headers).toEqual({ 'x-a': '1', 'x-b': '2' });
  });

  it('E2: before_mcp_request returning nothing keeps the input', async () => {
    let called = 0;
    @Injectable()
    class McpObserver {
      @OnHook('before_mcp_request')
      look() {
        called++;
      }
    }
    const { dispatcher } = await boot(McpObserver);
    const input = mcpReq();
    await expect(dispatcher.transform('before_mcp_request', input)).resolves.toBe(input);
    expect(called).toBe(1);
  });

  it('E2: before_mcp_request returning a plain headers object is a hook failure', async () => {
    @Injectable()
    class McpBad {
      @OnHook('before_mcp_request')
      bad() {
        return { headers: { authorization: 'Bearer t' } };
      }
    }
    const { dispatcher } = await boot(McpBad);
    const err = await dispatcher.transform('before_mcp_request', mcpReq()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HookFailedError);
    expect((err as HookFailedError).point).toBe('before_mcp_request');
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('E2 transform_tool_result: must return a ToolResultContext', () => {
  it('E2: the chain feeds each output into the next, in order', async () => {
    const seen: string[] = [];
    @Injectable()
    class Chain {
      // Declared out of order: `order` decides.
      @OnHook('transform_tool_result', { order: 3 })
      third(inv: HookInvocation) {
        const r = inv.payloadAs(ToolResultContext);
        seen.push(`third<${r.result}>`);
        return r.withResult(`${r.result}+c`);
      }
      @OnHook('transform_tool_result', { order: 1 })
      first(inv: HookInvocation) {
        const r = inv.payloadAs(ToolResultContext);
        seen.push(`first<${r.result}>`);
        return r.withResult(`${r.result}+a`);
      }
      @OnHook('transform_tool_result', { order: 2 })
      async second(inv: HookInvocation) {
        const r = inv.payloadAs(ToolResultContext);
        seen.push(`second<${r.result}>`);
        await pause(5, 'an asynchronous transform');
        return r.withResult(`${r.result}+b`);
      }
    }
    const { dispatcher } = await boot(Chain);
    const input = resultCtx('raw');
    const out = await dispatcher.transform('transform_tool_result', input);
    expect(out.result).toBe('raw+a+b+c');
    expect(seen).toEqual(['first<raw>', 'second<raw+a>', 'third<raw+a+b>']);
    expect(input.result).toBe('raw');
    expect(out.toolCallId).toBe('call-1');
  });

  it('E2: transform_tool_result returning undefined fails under fail (HookFailedError naming point and hook, original as cause)', async () => {
    let later = 0;
    @Injectable()
    class Forgetful {
      @OnHook('transform_tool_result', { order: 1 })
      forgot() {
        return undefined;
      }
      @OnHook('transform_tool_result', { order: 2 })
      later(inv: HookInvocation) {
        later++;
        return inv.payload;
      }
    }
    const { dispatcher } = await boot(Forgetful);
    const err = await dispatcher.transform('transform_tool_result', resultCtx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HookFailedError);
    const failed = err as HookFailedError;
    expect(failed.point).toBe('transform_tool_result');
    expect(failed.hookId).toBe('Forgetful.forgot');
    expect(failed.code).toBe('hook_failed');
    expect(failed.message).toContain('transform_tool_result');
    expect(failed.message).toContain('Forgetful.forgot');
    expect(failed.cause).toBeInstanceOf(Error);
    expect(failed.message).toMatch(/ToolResultContext/);
    expect(later).toBe(0);
  });

  it('E2: transform_tool_result returning null fails under fail', async () => {
    @Injectable()
    class Nulls {
      @OnHook('transform_tool_result')
      nothing() {
        return null;
      }
    }
    const { dispatcher } = await boot(Nulls);
    await expect(dispatcher.transform('transform_tool_result', resultCtx())).rejects.toBeInstanceOf(HookFailedError);
  });

  it('E2/E6: transform_tool_result returning undefined under warn keeps the input and the chain goes on', async () => {
    const seen: string[] = [];
    @Injectable()
    class WarnChain {
      @OnHook('transform_tool_result', { order: 1 })
      a(inv: HookInvocation) {
        return inv.payloadAs(ToolResultContext).withResult('A');
      }
      @OnHook('transform_tool_result', { order: 2, failurePolicy: 'warn' })
      forgetful(inv: HookInvocation) {
        seen.push(`forgetful<${inv.payloadAs(ToolResultContext).result}>`);
        return undefined;
      }
      @OnHook('transform_tool_result', { order: 3 })
      c(inv: HookInvocation) {
        const r = inv.payloadAs(ToolResultContext);
        seen.push(`c<${r.result}>`);
        return r.withResult(`${r.result}C`);
      }
    }
    const { dispatcher } = await boot(WarnChain);
    const out = await dispatcher.transform('transform_tool_result', resultCtx('raw'));
    expect(out.result).toBe('AC');
    expect(seen).toEqual(['forgetful<A>', 'c<A>']);
    const lines = warnLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('WarnChain.forgetful');
    expect(lines[0]).toContain('transform_tool_result');
  });

  it('E2: a single warn hook returning undefined yields the very input', async () => {
    @Injectable()
    class OnlyWarn {
      @OnHook('transform_tool_result', { failurePolicy: 'warn' })
      forgetful() {
        return undefined;
      }
    }
    const { dispatcher } = await boot(OnlyWarn);
    const input = resultCtx();
    await expect(dispatcher.transform('transform_tool_result', input)).resolves.toBe(input);
  });

  it('E2: transform_tool_result returning a plain object is a failure', async () => {
    @Injectable()
    class Plain {
      @OnHook('transform_tool_result')
      plain(inv: HookInvocation) {
        return { ...inv.payloadAs(ToolResultContext), result: 'forged' };
      }
    }
    const { dispatcher } = await boot(Plain);
    const err = await dispatcher.transform('transform_tool_result', resultCtx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HookFailedError);
    expect((err as HookFailedError).hookId).toBe('Plain.plain');
  });

  it('E2: transform_tool_result returning a different context (RunContext, ToolCallContext, a string) is a failure', async () => {
    @Injectable()
    class WrongTypes {
      @OnHook('transform_tool_result', { order: 1, failurePolicy: 'warn', id: 'run' })
      run() {
        return new RunContext({ runId: 'run-1' });
      }
      @OnHook('transform_tool_result', { order: 2, failurePolicy: 'warn', id: 'call' })
      call() {
        return callCtx();
      }
      @OnHook('transform_tool_result', { order: 3, failurePolicy: 'warn', id: 'text' })
      text() {
        return 'just the text';
      }
    }
    const { dispatcher } = await boot(WrongTypes);
    const errors: HookErrorEvent[] = [];
    const sub = dispatcher.errors$.subscribe((e) => errors.push(e));
    const input = resultCtx();
    await expect(dispatcher.transform('transform_tool_result', input)).resolves.toBe(input);
    sub.unsubscribe();
    expect(errors.map((e) => e.hookId)).toEqual(['run', 'call', 'text']);
    expect(errors.every((e) => e.point === 'transform_tool_result')).toBe(true);
    expect(warnLines()).toHaveLength(3);
  });

  it('DESIGN §6: a ToolResultContext from a structurally separate copy of the package (same brand) is accepted', async () => {
    class ForeignToolResultContext {
      static readonly brand = 'ToolResultContext';
      constructor(
        readonly runId: string,
        readonly toolCallId: string,
        readonly identifier: string,
        readonly apiName: string,
        readonly result: string,
      ) {
        stampBrands(this, ['ToolResultContext', 'ToolRequestContext']);
        Object.freeze(this);
      }
    }
    @Injectable()
    class Foreign {
      @OnHook('transform_tool_result')
      swap(inv: HookInvocation) {
        const r = inv.payloadAs(ToolResultContext);
        return new ForeignToolResultContext(r.runId, r.toolCallId, r.identifier, r.apiName, 'from the other copy');
      }
    }
    const { dispatcher } = await boot(Foreign);
    const out = await dispatcher.transform('transform_tool_result', resultCtx());
    expect(out).toBeInstanceOf(ForeignToolResultContext);
    expect(out.result).toBe('from the other copy');
  });

  it('E2/E6: a transform hook that throws fails with the thrown error as cause', async () => {
    const original = new AuditError(SECRET_MESSAGE);
    @Injectable()
    class Thrower {
      @OnHook('transform_tool_result')
      boom(): never {
        throw original;
      }
    }
    const { dispatcher } = await boot(Thrower);
    const err = await dispatcher.transform('transform_tool_result', resultCtx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HookFailedError);
    expect((err as HookFailedError).cause).toBe(original);
    expect((err as HookFailedError).message).toContain('AuditError');
    // S3: the wrapper names the type, never the original message.
    expect((err as HookFailedError).message).not.toContain('hunter2');
  });

  it('W5/E2: a matcher on transform_tool_result limits the hook to matching tools', async () => {
    @Injectable()
    class OnlyFs {
      @OnHook('transform_tool_result', { matcher: '^fs/' })
      tag(inv: HookInvocation) {
        const r = inv.payloadAs(ToolResultContext);
        return r.withResult(`[fs] ${r.result}`);
      }
    }
    const { dispatcher } = await boot(OnlyFs);
    expect((await dispatcher.transform('transform_tool_result', resultCtx('x'))).result).toBe('[fs] x');
    const web = new ToolResultContext({ ...toolInit, identifier: 'web', apiName: 'get', result: 'y' });
    await expect(dispatcher.transform('transform_tool_result', web)).resolves.toBe(web);
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('E2 observe points: return values are ignored', () => {
  it('E2: after_tool_call handlers cannot replace the payload; dispatch resolves undefined', async () => {
    const seen: unknown[] = [];
    @Injectable()
    class Observers {
      @OnHook('after_tool_call', { order: 1 })
      first() {
        return new ToolCallContext({ ...toolInit, toolCallId: 'forged', status: 'error', latencyMs: 0 });
      }
      @OnHook('after_tool_call', { order: 2 })
      second(inv: HookInvocation) {
        seen.push(inv.payload);
        return { decision: 'deny' };
      }
    }
    const { dispatcher } = await boot(Observers);
    const input = callCtx();
    await expect(dispatcher.dispatch('after_tool_call', input)).resolves.toBeUndefined();
    expect(seen).toEqual([input]);
    expect(seen[0]).toBe(input);
  });

  it('E2: every observe engine point delivers the payload unchanged and ignores garbage returns', async () => {
    const seen: Array<[string, unknown]> = [];
    @Injectable()
    class All {
      @OnHook('on_engine_start') a(inv: HookInvocation) { seen.push([inv.point, inv.payload]); return 'x'; }
      @OnHook('on_engine_stop') b(inv: HookInvocation) { seen.push([inv.point, inv.payload]); return 1; }
      @OnHook('on_run_end') c(inv: HookInvocation) { seen.push([inv.point, inv.payload]); return {}; }
      @OnHook('on_run_error') d(inv: HookInvocation) { seen.push([inv.point, inv.payload]); return new Error('replacement'); }
      @OnHook('before_tool_call') e(inv: HookInvocation) { seen.push([inv.point, inv.payload]); return null; }
      @OnHook('after_tool_call') f(inv: HookInvocation) { seen.push([inv.point, inv.payload]); return callCtx(); }
      @OnHook('on_tool_error') g(inv: HookInvocation) { seen.push([inv.point, inv.payload]); return false; }
      @OnHook('after_mcp_response') h(inv: HookInvocation) { seen.push([inv.point, inv.payload]); return Promise.resolve('y'); }
    }
    const { dispatcher } = await boot(All);
    const payloads = {
      on_engine_start: new EngineContext({ systemName: 's' }),
      on_engine_stop: new EngineContext({ systemName: 's' }),
      on_run_end: new RunEndContext({ runId: 'r', status: 'done', durationMs: 1, steps: 1, toolCalls: 0 }),
      on_run_error: new Error('original'),
      before_tool_call: new ToolRequestContext(toolInit),
      after_tool_call: callCtx(),
      on_tool_error: new ToolCallContext({ ...toolInit, status: 'error', latencyMs: 1, error: { type: 'TypeError' } }),
      after_mcp_response: new McpResponseContext({ serverId: 's', url: 'u', statusCode: 200, latencyMs: 1 }),
    } as const;
    for (const [point, payload] of Object.entries(payloads)) {
      await expect(dispatcher.dispatch(point as keyof typeof payloads, payload as never)).resolves.toBeUndefined();
    }
    expect(seen.map(([p]) => p)).toEqual(Object.keys(payloads));
    for (const [point, payload] of seen) expect(payload).toBe(payloads[point as keyof typeof payloads]);
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('E3: a point with no hooks returns at once', () => {
  it('E3: dispatch resolves, transform returns the same reference, and no outcome record is made', async () => {
    let elsewhere = 0;
    @Injectable()
    class Elsewhere {
      // Hooks at other points must not make the empty points do work.
      @OnHook('on_run_end')
      end() {
        elsewhere++;
      }
    }
    const { dispatcher } = await boot(Elsewhere);
    const records: HookOutcomeRecord[] = [];
    const sub = dispatcher.outcomes$.subscribe((r) => records.push(r));
    const result = resultCtx();
    const run = new RunContext({ runId: 'r' });
    const req = mcpReq();
    const dispatched = dispatcher.dispatch('after_tool_call', callCtx());
    expect(dispatched).toBeInstanceOf(Promise);
    await expect(dispatched).resolves.toBeUndefined();
    await expect(dispatcher.dispatch('on_run_error', new Error('x'))).resolves.toBeUndefined();
    await expect(dispatcher.transform('transform_tool_result', result)).resolves.toBe(result);
    await expect(dispatcher.transform('on_run_start', run)).resolves.toBe(run);
    await expect(dispatcher.transform('before_mcp_request', req)).resolves.toBe(req);
    expect(dispatcher.hasHooks('after_tool_call')).toBe(false);
    expect(dispatcher.hasHooks('transform_tool_result')).toBe(false);
    expect(records).toEqual([]);
    expect(elsewhere).toBe(0);
    // The observer works: a point with a hook does record.
    await dispatcher.dispatch('on_run_end', new RunEndContext({ runId: 'r', status: 'done', durationMs: 1, steps: 1, toolCalls: 0 }));
    sub.unsubscribe();
    expect(elsewhere).toBe(1);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ point: 'on_run_end', hookId: 'Elsewhere.end', source: 'decorator', outcome: 'ok' });
  });

  it('E3: with no hooks anywhere, repeated dispatches share one already-resolved promise', async () => {
    const { dispatcher } = await boot();
    const a = dispatcher.dispatch('before_tool_call', new ToolRequestContext(toolInit));
    const b = dispatcher.dispatch('on_engine_start', new EngineContext({ systemName: 's' }));
    expect(a).toBe(b);
    await expect(a).resolves.toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('E6: failure_policy', () => {
  it('E6: fail → HookFailedError (point, hookId, cause) and later hooks at that point are not called', async () => {
    const original = new AuditError(SECRET_MESSAGE);
    const calls: string[] = [];
    @Injectable()
    class Gate {
      @OnHook('before_tool_call', { order: 1 })
      ok() {
        calls.push('ok');
      }
      @OnHook('before_tool_call', { order: 2, id: 'auth-gate' })
      deny(): never {
        calls.push('deny');
        throw original;
      }
      @OnHook('before_tool_call', { order: 3 })
      later() {
        calls.push('later');
      }
    }
    const { dispatcher } = await boot(Gate);
    const err = await dispatcher.dispatch('before_tool_call', new ToolRequestContext(toolInit)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HookFailedError);
    const failed = err as HookFailedError;
    expect(failed.point).toBe('before_tool_call');
    expect(failed.hookId).toBe('auth-gate');
    expect(failed.cause).toBe(original);
    expect(failed.name).toBe('HookFailedError');
    expect(calls).toEqual(['ok', 'deny']);
  });

  it('E6: fail is the default policy, for async rejections too', async () => {
    let later = 0;
    @Injectable()
    class AsyncFail {
      @OnHook('on_engine_start', { order: 1 })
      async check(): Promise<void> {
        await Promise.resolve();
        throw new Error('ANTHROPIC_API_KEY missing');
      }
      @OnHook('on_engine_start', { order: 2 })
      later() {
        later++;
      }
    }
    const { dispatcher } = await boot(AsyncFail);
    const err = await dispatcher.dispatch('on_engine_start', new EngineContext({ systemName: 's' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HookFailedError);
    expect((err as HookFailedError).hookId).toBe('AsyncFail.check');
    expect((err as HookFailedError).point).toBe('on_engine_start');
    expect(later).toBe(0);
  });

  it('E6: warn → logged and continues; the next hook runs', async () => {
    const calls: string[] = [];
    @Injectable()
    class Audit {
      @OnHook('after_tool_call', { order: 1, failurePolicy: 'warn' })
      audit(): never {
        calls.push('audit');
        throw new AuditError(SECRET_MESSAGE);
      }
      @OnHook('after_tool_call', { order: 2 })
      next() {
        calls.push('next');
      }
    }
    const { dispatcher } = await boot(Audit);
    await expect(dispatcher.dispatch('after_tool_call', callCtx())).resolves.toBeUndefined();
    expect(calls).toEqual(['audit', 'next']);
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it('E6/S1/S3: the warn log line has the point, hook id and error type but NOT the error message', async () => {
    @Injectable()
    class Audit {
      @OnHook('after_tool_call', { failurePolicy: 'warn', id: 'audit-hook-7' })
      audit(): never {
        throw new AuditError(SECRET_MESSAGE);
      }
    }
    const { dispatcher } = await boot(Audit);
    const others = [jest.spyOn(Logger.prototype, 'error'), jest.spyOn(Logger.prototype, 'log'), jest.spyOn(Logger.prototype, 'debug')];
    await dispatcher.dispatch('after_tool_call', callCtx());
    const lines = warnLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('after_tool_call');
    expect(lines[0]).toContain('audit-hook-7');
    expect(lines[0]).toContain('AuditError');
    expect(lines[0]).not.toContain('hunter2');
    expect(lines[0]).not.toContain(SECRET_MESSAGE);
    // Nothing else the dispatcher logged leaks it either.
    for (const spy of others) expect(spy.mock.calls.flat().map(String).join('\n')).not.toContain('hunter2');
  });

  it('E6: the warn line also goes through a custom logger installed with moduleRef.useLogger', async () => {
    warn.mockRestore();
    const lines: string[] = [];
    const custom = {
      log: () => undefined,
      error: (m: unknown) => lines.push(`error ${String(m)}`),
      warn: (m: unknown) => lines.push(`warn ${String(m)}`),
      debug: () => undefined,
      verbose: () => undefined,
    };
    @Injectable()
    class Audit {
      @OnHook('on_tool_error', { failurePolicy: 'warn' })
      audit(): never {
        throw new TypeError(SECRET_MESSAGE);
      }
    }
    const previous = (Logger as unknown as { staticInstanceRef?: unknown }).staticInstanceRef;
    const moduleRef = await Test.createTestingModule({ imports: [AgentHooksModule.forRoot({ configFile: false })], providers: [Audit] }).compile();
    opened.push(moduleRef);
    try {
      moduleRef.useLogger(custom);
      await moduleRef.init();
      await moduleRef.get(HookDispatcher).dispatch('on_tool_error', new ToolCallContext({ ...toolInit, status: 'error', latencyMs: 1, error: { type: 'TypeError' } }));
    } finally {
      Logger.overrideLogger(previous as never);
    }
    const hookLines = lines.filter((l) => l.includes('Audit.audit'));
    expect(hookLines).toHaveLength(1);
    expect(hookLines[0]).toMatch(/^warn /);
    expect(hookLines[0]).toContain('on_tool_error');
    expect(hookLines[0]).toContain('TypeError');
    expect(lines.join('\n')).not.toContain('hunter2');
  });

  it('E6: a throwing warn hook in a transform chain is skipped; the next hook gets the previous output', async () => {
    @Injectable()
    class Chain {
      @OnHook('transform_tool_result', { order: 1 })
      a(inv: HookInvocation) {
        return inv.payloadAs(ToolResultContext).withResult('A');
      }
      @OnHook('transform_tool_result', { order: 2, failurePolicy: 'warn' })
      broken(): never {
        throw new AuditError(SECRET_MESSAGE);
      }
      @OnHook('transform_tool_result', { order: 3 })
      c(inv: HookInvocation) {
        const r = inv.payloadAs(ToolResultContext);
        return r.withResult(`${r.result}C`);
      }
    }
    const { dispatcher } = await boot(Chain);
    await expect(dispatcher.transform('transform_tool_result', resultCtx('raw'))).resolves.toMatchObject({ result: 'AC' });
    expect(warnLines()).toHaveLength(1);
    expect(warnLines()[0]).toContain('Chain.broken');
    expect(warnLines()[0]).not.toContain('hunter2');
  });

  it('E6/S3: a thrown non-Error value (a string holding a secret) is reported by type only', async () => {
    @Injectable()
    class StringThrower {
      @OnHook('after_tool_call', { order: 1, failurePolicy: 'warn' })
      warnOne(): never {
        throw SECRET_MESSAGE;
      }
      @OnHook('after_tool_call', { order: 2 })
      failOne(): never {
        throw SECRET_MESSAGE;
      }
    }
    const { dispatcher } = await boot(StringThrower);
    const err = await dispatcher.dispatch('after_tool_call', callCtx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HookFailedError);
    expect((err as HookFailedError).cause).toBe(SECRET_MESSAGE);
    expect((err as HookFailedError).message).not.toContain('hunter2');
    expect((err as HookFailedError).hookId).toBe('StringThrower.failOne');
    expect(warnLines()).toHaveLength(1);
    expect(warnLines()[0]).toContain('StringThrower.warnOne');
    expect(warnLines()[0]).toContain('string');
    expect(warnLines()[0]).not.toContain('hunter2');
  });

  it('E6/DESIGN §3: on_engine_stop never propagates, even under fail; the next hook still runs', async () => {
    const calls: string[] = [];
    @Injectable()
    class Stop {
      @OnHook('on_engine_stop', { order: 1, failurePolicy: 'fail' })
      flush(): never {
        calls.push('flush');
        throw new AuditError(SECRET_MESSAGE);
      }
      @OnHook('on_engine_stop', { order: 2 })
      close() {
        calls.push('close');
      }
    }
    const { dispatcher } = await boot(Stop);
    await expect(dispatcher.dispatch('on_engine_stop', new EngineContext({ systemName: 's' }))).resolves.toBeUndefined();
    expect(calls).toEqual(['flush', 'close']);
    expect(warnLines().some((l) => l.includes('Stop.flush') && l.includes('on_engine_stop') && l.includes('AuditError'))).toBe(true);
    expect(warnLines().join('\n')).not.toContain('hunter2');
  });

  it('E2/E6: on_run_error never propagates under fail and never masks the original error', async () => {
    const calls: string[] = [];
    @Injectable()
    class RunError {
      @OnHook('on_run_error', { order: 1 })
      broken(inv: HookInvocation): never {
        calls.push(`broken:${inv.payloadAs(Error).name}`);
        throw new AuditError('hook bug');
      }
      @OnHook('on_run_error', { order: 2 })
      record(inv: HookInvocation) {
        calls.push(`record:${inv.payloadAs(Error).message}`);
      }
    }
    const { dispatcher } = await boot(RunError);
    const original = new RangeError('the real failure');
    await expect(dispatcher.dispatch('on_run_error', original)).resolves.toBeUndefined();
    expect(calls).toEqual(['broken:RangeError', 'record:the real failure']);
    expect(original.message).toBe('the real failure');
    expect(warnLines().some((l) => l.includes('RunError.broken') && l.includes('on_run_error'))).toBe(true);
  });

  it('E6: handled failures are reported on errors$ with the error type; outcome records mark them error', async () => {
    @Injectable()
    class Audit {
      @OnHook('after_mcp_response', { failurePolicy: 'warn' })
      audit(): never {
        throw new AuditError(SECRET_MESSAGE);
      }
    }
    const { dispatcher } = await boot(Audit);
    const errors: HookErrorEvent[] = [];
    const records: HookOutcomeRecord[] = [];
    const s1 = dispatcher.errors$.subscribe((e) => errors.push(e));
    const s2 = dispatcher.outcomes$.subscribe((r) => records.push(r));
    await dispatcher.dispatch('after_mcp_response', new McpResponseContext({ serverId: 's', url: 'u', statusCode: 500, latencyMs: 2 }), { operationId: 'op-9' });
    s1.unsubscribe();
    s2.unsubscribe();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ point: 'after_mcp_response', hookId: 'Audit.audit', errorType: 'AuditError', operationId: 'op-9' });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ point: 'after_mcp_response', hookId: 'Audit.audit', outcome: 'error', source: 'decorator' });
    expect(JSON.stringify(records)).not.toContain('hunter2');
  });

  it('E6: a hook exceeding timeoutMs fails under fail with a HookTimeoutError cause', async () => {
    @Injectable()
    class Slow {
      @OnHook('on_run_end', { timeoutMs: 20 })
      async slow() {
        await pause(200, 'a handler past its 20 ms timeout');
      }
    }
    const { dispatcher } = await boot(Slow);
    const err = await dispatcher.dispatch('on_run_end', new RunEndContext({ runId: 'r', status: 'done', durationMs: 1, steps: 1, toolCalls: 0 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HookFailedError);
    expect((err as HookFailedError).cause).toBeInstanceOf(HookTimeoutError);
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('E7: an engine hook method receives one HookInvocation', () => {
  it('E7: point, payload, runContext (from DispatchOptions), metadata, plugin/method and payloadAs', async () => {
    const received: unknown[][] = [];
    @Injectable()
    class AuditPlugin {
      @OnHook('after_tool_call')
      auditToolCall(...args: unknown[]) {
        received.push(args);
      }
    }
    const { dispatcher } = await boot(AuditPlugin);
    const run = new RunContext({ runId: 'run-1', userId: 'alice', organizationId: 'acme', authContext: new AuthContext({ inboundAccessToken: 't', scopes: ['x'] }) });
    const payload = callCtx();
    const metadata = Object.freeze({ team: 'platform' });
    await dispatcher.dispatch('after_tool_call', payload, { runContext: run, metadata });
    expect(received).toHaveLength(1);
    expect(received[0]).toHaveLength(1);
    const inv = received[0]![0] as HookInvocation;
    expect(inv).toBeInstanceOf(HookInvocation);
    expect(inv.point).toBe('after_tool_call');
    expect(inv.payload).toBe(payload);
    expect(inv.runContext).toBe(run);
    expect(inv.runContext?.userId).toBe('alice');
    expect(inv.metadata).toEqual({ team: 'platform' });
    expect(inv.plugin).toBe('AuditPlugin');
    expect(inv.method).toBe('auditToolCall');
    expect(inv.ref).toBeUndefined();
    expect(inv.payloadAs(ToolCallContext)).toBe(payload);
    expect(inv.payloadAs(ToolRequestContext)).toBe(payload);
    expect(() => inv.payloadAs(ToolResultContext)).toThrow(TypeError);
  });

  it('E7: each dispatch builds a fresh invocation; per-request state comes from the event, the plugin instance is long-lived', async () => {
    const invocations: HookInvocation[] = [];
    const instances = new Set<object>();
    @Injectable()
    class LongLived {
      @OnHook('before_tool_call')
      look(inv: HookInvocation) {
        invocations.push(inv);
        instances.add(this);
      }
    }
    const { dispatcher } = await boot(LongLived);
    await dispatcher.dispatch('before_tool_call', new ToolRequestContext(toolInit), { runContext: new RunContext({ runId: 'run-1', userId: 'a' }) });
    await dispatcher.dispatch('before_tool_call', new ToolRequestContext({ ...toolInit, runId: 'run-2' }), { runContext: new RunContext({ runId: 'run-2', userId: 'b' }) });
    expect(invocations).toHaveLength(2);
    expect(invocations[0]).not.toBe(invocations[1]);
    expect(invocations.map((i) => i.runContext?.userId)).toEqual(['a', 'b']);
    expect(invocations.map((i) => i.payloadAs(ToolRequestContext).runId)).toEqual(['run-1', 'run-2']);
    expect(instances.size).toBe(1);
  });

  it('E7: without options the metadata is an empty frozen object and runContext is absent (except at on_run_start)', async () => {
    const invocations: HookInvocation[] = [];
    @Injectable()
    class Plain {
      @OnHook('on_run_end')
      end(inv: HookInvocation) {
        invocations.push(inv);
      }
      @OnHook('on_run_start')
      start(inv: HookInvocation) {
        invocations.push(inv);
      }
    }
    const { dispatcher } = await boot(Plain);
    await dispatcher.dispatch('on_run_end', new RunEndContext({ runId: 'r', status: 'done', durationMs: 1, steps: 1, toolCalls: 0 }));
    const run = new RunContext({ runId: 'r', userId: 'u' });
    await dispatcher.transform('on_run_start', run);
    expect(invocations[0]!.metadata).toEqual({});
    expect(Object.isFrozen(invocations[0]!.metadata)).toBe(true);
    expect(invocations[0]!.runContext).toBeUndefined();
    // At on_run_start the payload is the run's identity.
    expect(invocations[1]!.runContext).toBe(run);
  });

  it('E7: the hook id defaults to ClassName.method and can be set with the id option', async () => {
    const records: HookOutcomeRecord[] = [];
    @Injectable()
    class Ids {
      @OnHook('on_engine_start')
      plain() {}
      @OnHook('on_engine_start', { id: 'validate_environment' })
      named() {}
    }
    const { dispatcher } = await boot(Ids);
    const sub = dispatcher.outcomes$.subscribe((r) => records.push(r));
    await dispatcher.dispatch('on_engine_start', new EngineContext({ systemName: 's' }));
    sub.unsubscribe();
    expect(records.map((r) => r.hookId)).toEqual(['Ids.plain', 'validate_environment']);
  });
});
