/**
 * Engine-family contexts (DESIGN §6; SPEC E2, E7, E8, E9, S1): immutability, copy helpers, brands,
 * `HookInvocation.payloadAs`, and secrecy of the inbound access token.
 */
import { inspect } from 'node:util';
import { stampBrands } from '../../../src/hooks/context-brand.js';
import {
  AuthContext,
  EngineContext,
  HookInvocation,
  McpRequestContext,
  McpResponseContext,
  RunContext,
  RunEndContext,
  ToolCallContext,
  ToolRequestContext,
  ToolResultContext,
} from '../../../src/index.js';
import { CONTEXT_BRAND, hasBrand } from '../../../src/hooks/context-brand.js';

const TOKEN = 'tok-8f3a1c9e-SECRET-inbound';

const request = { runId: 'run-1', toolCallId: 'call-1', identifier: 'fs', apiName: 'readFile', provider: 'local' };

function allContexts(): object[] {
  return [
    new EngineContext({ systemName: 'sys', metadata: { team: 'platform' } }),
    new AuthContext({ inboundAccessToken: TOKEN, scopes: ['read'] }),
    new RunContext({ runId: 'run-1', userId: 'u1', metadata: { a: 1 } }),
    new RunEndContext({ runId: 'run-1', status: 'ok', durationMs: 5, steps: 2, toolCalls: 1 }),
    new ToolRequestContext(request),
    new ToolCallContext({ ...request, status: 'ok', latencyMs: 3 }),
    new ToolResultContext({ ...request, result: 'text' }),
    new McpRequestContext({ serverId: 'kb', url: 'http://127.0.0.1/mcp', method: 'connect' }),
    new McpResponseContext({ serverId: 'kb', url: 'http://127.0.0.1/mcp', statusCode: 200, latencyMs: 4 }),
  ];
}

describe('contexts: immutability (DESIGN §6)', () => {
  it('DESIGN §6: every engine context is frozen', () => {
    for (const ctx of allContexts()) {
      expect({ name: ctx.constructor.name, frozen: Object.isFrozen(ctx) }).toEqual({ name: ctx.constructor.name, frozen: true });
    }
  });

  it('DESIGN §6: assignment to a context field throws in strict mode', () => {
    const run = new RunContext({ runId: 'run-1', userId: 'u1' });
    expect(() => {
      (run as { userId?: string }).userId = 'evil';
    }).toThrow(TypeError);
    expect(() => {
      (run as unknown as { runId: string }).runId = 'other';
    }).toThrow(TypeError);
    expect(run.userId).toBe('u1');
    expect(run.runId).toBe('run-1');

    const result = new ToolResultContext({ ...request, result: 'text' });
    expect(() => {
      (result as unknown as { result: string }).result = 'changed';
    }).toThrow(TypeError);
    expect(() => {
      (result as unknown as { extra: number }).extra = 1;
    }).toThrow(TypeError);
    expect(result.result).toBe('text');

    const call = new ToolCallContext({ ...request, status: 'error', latencyMs: 3, error: { type: 'TypeError' } });
    expect(() => {
      (call as unknown as { status: string }).status = 'ok';
    }).toThrow(TypeError);
    expect(() => {
      (call.error as { type: string }).type = 'Other';
    }).toThrow(TypeError);
  });

  it('DESIGN §6: nested metadata, headers and scopes are frozen copies of the input', () => {
    const meta: Record<string, unknown> = { a: 1 };
    const run = new RunContext({ runId: 'r', metadata: meta });
    meta.a = 2;
    meta.b = 3;
    expect(run.metadata).toEqual({ a: 1 });
    expect(Object.isFrozen(run.metadata)).toBe(true);
    expect(() => {
      (run.metadata as Record<string, unknown>).a = 9;
    }).toThrow(TypeError);

    const headers: Record<string, string> = { 'x-a': '1' };
    const mcp = new McpRequestContext({ serverId: 's', url: 'http://x', method: 'callTool', headers });
    headers['x-b'] = '2';
    expect(mcp.headers).toEqual({ 'x-a': '1' });
    expect(() => {
      (mcp.headers as Record<string, string>)['x-c'] = '3';
    }).toThrow(TypeError);

    const scopes = ['read'];
    const auth = new AuthContext({ inboundAccessToken: TOKEN, scopes });
    scopes.push('admin');
    expect(auth.scopes).toEqual(['read']);
    expect(() => {
      (auth.scopes as string[]).push('admin');
    }).toThrow(TypeError);

    const engine = new EngineContext({ systemName: 's', metadata: { team: 'x' } });
    expect(Object.isFrozen(engine.metadata)).toBe(true);
  });

  it('E2: McpRequestContext starts with empty headers', () => {
    const mcp = new McpRequestContext({ serverId: 's', url: 'http://x', method: 'connect' });
    expect(mcp.headers).toEqual({});
  });

  it('E7: HookInvocation is frozen too', () => {
    const inv = new HookInvocation({ point: 'on_run_end', payload: 1 });
    expect(Object.isFrozen(inv)).toBe(true);
    expect(() => {
      (inv as unknown as { payload: number }).payload = 2;
    }).toThrow(TypeError);
  });
});

describe('contexts: copy helpers return new instances (DESIGN §6)', () => {
  it('DESIGN §6: RunContext.replace returns a new RunContext with the patch, the original unchanged', () => {
    const auth = new AuthContext({ inboundAccessToken: TOKEN, scopes: ['a'] });
    const run = new RunContext({ runId: 'run-1', userId: 'u1', organizationId: 'o1', metadata: { k: 1 } });
    const next = run.replace({ userId: 'u2', authContext: auth, metadata: { k: 2 } });
    expect(next).not.toBe(run);
    expect(next).toBeInstanceOf(RunContext);
    expect(hasBrand(next, 'RunContext')).toBe(true);
    expect(Object.isFrozen(next)).toBe(true);
    expect(next.userId).toBe('u2');
    expect(next.organizationId).toBe('o1');
    expect(next.authContext).toBe(auth);
    expect(next.metadata).toEqual({ k: 2 });
    expect(run.userId).toBe('u1');
    expect(run.authContext).toBeUndefined();
    expect(run.metadata).toEqual({ k: 1 });
  });

  it('DESIGN §3/§6: RunContext.replace ignores runId', () => {
    const run = new RunContext({ runId: 'run-1', userId: 'u1' });
    const next = run.replace({ runId: 'run-HIJACK', userId: 'u2' });
    expect(next.runId).toBe('run-1');
    expect(next.userId).toBe('u2');
  });

  it('DESIGN §6: RunContext.replace with an empty patch is a distinct equal copy', () => {
    const run = new RunContext({ runId: 'run-1', userId: 'u1', metadata: { m: true } });
    const copy = run.replace({});
    expect(copy).not.toBe(run);
    expect(copy.runId).toBe('run-1');
    expect(copy.userId).toBe('u1');
    expect(copy.metadata).toEqual({ m: true });
  });

  it('DESIGN §6: ToolResultContext.withResult returns a new context with the new text and the same identity', () => {
    const before = new ToolResultContext({ ...request, result: 'original' });
    const after = before.withResult('trimmed');
    expect(after).not.toBe(before);
    expect(after.result).toBe('trimmed');
    expect(before.result).toBe('original');
    for (const key of ['runId', 'toolCallId', 'identifier', 'apiName', 'toolName', 'provider'] as const) {
      expect(after[key]).toBe(before[key]);
    }
    expect(after.toolName).toBe('fs/readFile');
    expect(hasBrand(after, 'ToolResultContext')).toBe(true);
    expect(hasBrand(after, 'ToolRequestContext')).toBe(true);
    expect(Object.isFrozen(after)).toBe(true);
  });

  it('DESIGN §6: McpRequestContext.withHeaders merges over the existing headers into a new instance', () => {
    const before = new McpRequestContext({ serverId: 'context7', url: 'https://mcp.example/mcp', method: 'callTool', headers: { 'x-trace': 't1', 'x-keep': 'k' } });
    const after = before.withHeaders({ authorization: 'Bearer abc', 'x-trace': 't2' });
    expect(after).not.toBe(before);
    expect(after.headers).toEqual({ 'x-trace': 't2', 'x-keep': 'k', authorization: 'Bearer abc' });
    expect(before.headers).toEqual({ 'x-trace': 't1', 'x-keep': 'k' });
    expect(after.serverId).toBe('context7');
    expect(after.url).toBe('https://mcp.example/mcp');
    expect(after.method).toBe('callTool');
    expect(hasBrand(after, 'McpRequestContext')).toBe(true);
    expect(Object.isFrozen(after.headers)).toBe(true);
  });
});

describe('contexts: brands and payloadAs (DESIGN §6, E7)', () => {
  it('DESIGN §6: the brand key is a Symbol.for key, shared by every copy of the package', () => {
    expect(CONTEXT_BRAND).toBe(Symbol.for('nest-agent-hooks.context-brand'));
    const run = new RunContext({ runId: 'r' });
    expect(Object.keys(run)).not.toContain(String(CONTEXT_BRAND));
    expect(Object.getOwnPropertyDescriptor(run, CONTEXT_BRAND)?.enumerable).toBe(false);
  });

  it('E7: payloadAs returns the payload itself for the matching class', () => {
    const run = new RunContext({ runId: 'r' });
    const inv = new HookInvocation({ point: 'on_run_start', payload: run });
    expect(inv.payloadAs(RunContext)).toBe(run);
  });

  it('DESIGN §6: payloadAs matches by brand across a structurally separate class that stamps the same brand', () => {
    // A second copy of the package: a different class object with the same brand name.
    class ForeignRunContext {
      static readonly brand = 'RunContext';
      readonly runId = 'run-foreign';
      constructor() {
        stampBrands(this, [ForeignRunContext.brand]);
        Object.freeze(this);
      }
    }
    const foreign = new ForeignRunContext();
    expect(foreign instanceof RunContext).toBe(false);
    const inv = new HookInvocation({ point: 'on_run_start', payload: foreign });
    expect(inv.payloadAs(RunContext)).toBe(foreign);
    expect(inv.payloadAs(RunContext).runId).toBe('run-foreign');

    // And the other way round: our payload, the plugin's copy of the class.
    const ours = new HookInvocation({ point: 'on_run_start', payload: new RunContext({ runId: 'r2' }) });
    expect(ours.payloadAs(ForeignRunContext).runId).toBe('r2');
  });

  it('DESIGN §6: payloadAs matches a bare Object.create(null) stamped with the brand by Symbol.for (no shared import)', () => {
    const copy = Object.create(null) as Record<PropertyKey, unknown>;
    copy.serverId = 'kb';
    Object.defineProperty(copy, Symbol.for('nest-agent-hooks.context-brand'), { value: Object.freeze(['McpRequestContext']) });
    const inv = new HookInvocation({ point: 'before_mcp_request', payload: copy });
    expect(inv.payloadAs(McpRequestContext)).toBe(copy);
    expect(() => inv.payloadAs(McpResponseContext)).toThrow(TypeError);
  });

  it('DESIGN §6: payloadAs does not accept an unbranded object, even one with the right prototype', () => {
    const fake = Object.create(RunContext.prototype) as RunContext;
    expect(fake instanceof RunContext).toBe(true);
    const inv = new HookInvocation({ point: 'on_run_start', payload: fake });
    expect(() => inv.payloadAs(RunContext)).toThrow(TypeError);
    const plain = new HookInvocation({ point: 'on_run_start', payload: { runId: 'r' } });
    expect(() => plain.payloadAs(RunContext)).toThrow(TypeError);
  });

  it('DESIGN §6: payloadAs throws TypeError on a mismatch, naming the expected type, the point and the actual brand', () => {
    const inv = new HookInvocation({ point: 'transform_tool_result', payload: new RunContext({ runId: 'r' }) });
    expect(() => inv.payloadAs(ToolResultContext)).toThrow(TypeError);
    expect(() => inv.payloadAs(ToolResultContext)).toThrow(/ToolResultContext/);
    expect(() => inv.payloadAs(ToolResultContext)).toThrow(/transform_tool_result/);
    expect(() => inv.payloadAs(ToolResultContext)).toThrow(/RunContext/);
  });

  it('DESIGN §6: payloadAs on null / primitive payloads throws TypeError', () => {
    for (const payload of [null, undefined, 'RunContext', 42]) {
      const inv = new HookInvocation({ point: 'on_run_start', payload });
      expect(() => inv.payloadAs(RunContext)).toThrow(TypeError);
    }
  });

  it('DESIGN §6: ToolCallContext and ToolResultContext also satisfy payloadAs(ToolRequestContext)', () => {
    const call = new ToolCallContext({ ...request, status: 'ok', latencyMs: 1 });
    const result = new ToolResultContext({ ...request, result: 'x' });
    expect(new HookInvocation({ point: 'after_tool_call', payload: call }).payloadAs(ToolRequestContext)).toBe(call);
    expect(new HookInvocation({ point: 'transform_tool_result', payload: result }).payloadAs(ToolRequestContext)).toBe(result);
    expect(new HookInvocation({ point: 'after_tool_call', payload: call }).payloadAs(ToolCallContext)).toBe(call);
    expect(new HookInvocation({ point: 'transform_tool_result', payload: result }).payloadAs(ToolResultContext)).toBe(result);
  });

  it('DESIGN §6: siblings and parents do not satisfy the narrower type', () => {
    const call = new ToolCallContext({ ...request, status: 'ok', latencyMs: 1 });
    const req = new ToolRequestContext(request);
    expect(() => new HookInvocation({ point: 'after_tool_call', payload: call }).payloadAs(ToolResultContext)).toThrow(TypeError);
    expect(() => new HookInvocation({ point: 'before_tool_call', payload: req }).payloadAs(ToolCallContext)).toThrow(TypeError);
    expect(() => new HookInvocation({ point: 'before_tool_call', payload: req }).payloadAs(ToolResultContext)).toThrow(TypeError);
  });

  it('E2/DESIGN §6: payloadAs(Error) at on_run_error works by instanceof, subclasses included', () => {
    const error = new RangeError('boom');
    const inv = new HookInvocation({ point: 'on_run_error', payload: error });
    expect(inv.payloadAs(Error)).toBe(error);
    expect(inv.payloadAs(RangeError)).toBe(error);
    expect(() => inv.payloadAs(TypeError)).toThrow(TypeError);
    expect(() => inv.payloadAs(RunContext)).toThrow(TypeError);
    const notAnError = new HookInvocation({ point: 'on_run_error', payload: { message: 'boom' } });
    expect(() => notAnError.payloadAs(Error)).toThrow(TypeError);
  });

  it('DESIGN §6: each context carries its own brand (and ToolRequestContext for the tool subclasses)', () => {
    const expected: Array<[object, string[]]> = [
      [new EngineContext({ systemName: 's' }), ['EngineContext']],
      [new RunContext({ runId: 'r' }), ['RunContext']],
      [new RunEndContext({ runId: 'r', status: 'ok', durationMs: 1, steps: 1, toolCalls: 0 }), ['RunEndContext']],
      [new ToolRequestContext(request), ['ToolRequestContext']],
      [new ToolCallContext({ ...request, status: 'ok', latencyMs: 1 }), ['ToolCallContext', 'ToolRequestContext']],
      [new ToolResultContext({ ...request, result: 'x' }), ['ToolResultContext', 'ToolRequestContext']],
      [new McpRequestContext({ serverId: 's', url: 'u', method: 'm' }), ['McpRequestContext']],
      [new McpResponseContext({ serverId: 's', url: 'u', statusCode: 1, latencyMs: 1 }), ['McpResponseContext']],
    ];
    for (const [ctx, brands] of expected) {
      for (const brand of brands) expect({ ctx: ctx.constructor.name, brand, has: hasBrand(ctx, brand) }).toEqual({ ctx: ctx.constructor.name, brand, has: true });
      expect(hasBrand(ctx, 'AuthContext')).toBe(false);
    }
  });
});

describe('contexts: AuthContext never shows its token (E8, S1)', () => {
  const auth = () => new AuthContext({ inboundAccessToken: TOKEN, scopes: ['kb:read', 'kb:write'] });

  it('E8: the token is still readable through the getter', () => {
    expect(auth().inboundAccessToken).toBe(TOKEN);
    expect(auth().scopes).toEqual(['kb:read', 'kb:write']);
    expect(new AuthContext().inboundAccessToken).toBeUndefined();
  });

  it('S1: toString / template strings do not show the token', () => {
    const a = auth();
    expect(a.toString()).not.toContain(TOKEN);
    expect(`${a}`).not.toContain(TOKEN);
    expect(String(a)).not.toContain(TOKEN);
    expect(String(a)).toContain('kb:read');
  });

  it('S1: util.inspect does not show the token (also with showHidden, and with customInspect off)', () => {
    const a = auth();
    expect(inspect(a)).not.toContain(TOKEN);
    expect(inspect(a, { showHidden: true, depth: 10 })).not.toContain(TOKEN);
    expect(inspect(a, { customInspect: false, showHidden: true, depth: 10 })).not.toContain(TOKEN);
  });

  it('S1: JSON.stringify, spreading and key enumeration do not show the token', () => {
    const a = auth();
    expect(JSON.stringify(a)).not.toContain(TOKEN);
    expect(JSON.stringify({ ...a })).not.toContain(TOKEN);
    expect(Object.values(a)).not.toContain(TOKEN);
    expect(Reflect.ownKeys(a).map((k) => (a as unknown as Record<PropertyKey, unknown>)[k])).not.toContain(TOKEN);
    expect(JSON.parse(JSON.stringify(a))).toEqual({ scopes: ['kb:read', 'kb:write'], inboundAccessToken: '[REDACTED]' });
  });

  it('S1: a RunContext holding an AuthContext does not show the token in inspect or JSON', () => {
    const run = new RunContext({ runId: 'run-1', userId: 'u1', authContext: auth() });
    expect(inspect(run)).not.toContain(TOKEN);
    expect(inspect(run, { depth: Infinity, showHidden: true })).not.toContain(TOKEN);
    expect(inspect({ wrapper: { run } }, { depth: Infinity })).not.toContain(TOKEN);
    expect(JSON.stringify(run)).not.toContain(TOKEN);
    expect(JSON.stringify({ run })).not.toContain(TOKEN);
    expect(String(run.authContext)).not.toContain(TOKEN);
    // Still usable by a trusted hook.
    expect(run.authContext?.inboundAccessToken).toBe(TOKEN);
    // A copy made by replace keeps the credentials, and still hides them.
    const copy = run.replace({ userId: 'u2' });
    expect(copy.authContext?.inboundAccessToken).toBe(TOKEN);
    expect(inspect(copy)).not.toContain(TOKEN);
    expect(JSON.stringify(copy)).not.toContain(TOKEN);
  });

  it('S1: a HookInvocation carrying that RunContext does not show the token in inspect or JSON', () => {
    const run = new RunContext({ runId: 'run-1', authContext: auth() });
    const inv = new HookInvocation({ point: 'on_run_start', payload: run, runContext: run });
    expect(inspect(inv, { depth: Infinity })).not.toContain(TOKEN);
    expect(JSON.stringify(inv)).not.toContain(TOKEN);
  });

  it('DESIGN §5: withoutToken drops the token and keeps the scopes', () => {
    const stripped = auth().withoutToken();
    expect(stripped.inboundAccessToken).toBeUndefined();
    expect(stripped.scopes).toEqual(['kb:read', 'kb:write']);
    expect(JSON.parse(JSON.stringify(stripped))).toEqual({ scopes: ['kb:read', 'kb:write'] });
  });
});

describe('contexts: observe-only contexts carry safe metadata only (E9, E2, S1)', () => {
  const leaky = { args: { path: '/etc/secret' }, result: 'RAW RESULT BODY', arguments: { x: 1 }, content: 'RAW' };

  it('E9: ToolRequestContext has no args/result fields, even when the init object carries them', () => {
    const ctx = new ToolRequestContext({ ...request, ...leaky } as never);
    for (const field of ['args', 'arguments', 'result', 'content']) expect(field in ctx).toBe(false);
    expect(Object.keys(ctx).sort()).toEqual(['apiName', 'identifier', 'provider', 'runId', 'toolCallId', 'toolName']);
    expect(JSON.stringify(ctx)).not.toContain('/etc/secret');
    expect(JSON.stringify(ctx)).not.toContain('RAW');
  });

  it('E9: ToolCallContext has no args/result fields; its error carries only the type', () => {
    const ctx = new ToolCallContext({
      ...request,
      ...leaky,
      status: 'error',
      latencyMs: 12,
      error: { type: 'ENOENT', message: 'open /etc/secret failed' } as never,
    } as never);
    for (const field of ['args', 'arguments', 'result', 'content']) expect(field in ctx).toBe(false);
    expect(ctx.error).toEqual({ type: 'ENOENT' });
    expect(Object.keys(ctx).sort()).toEqual(['apiName', 'error', 'identifier', 'latencyMs', 'provider', 'runId', 'status', 'toolCallId', 'toolName']);
    expect(JSON.stringify(ctx)).not.toContain('/etc/secret');
    expect(inspect(ctx, { depth: Infinity })).not.toContain('/etc/secret');
  });

  it('E2: RunEndContext holds a safe summary and no answer text', () => {
    const ctx = new RunEndContext({ runId: 'r', status: 'done', durationMs: 10, steps: 2, toolCalls: 1, content: 'THE ANSWER' } as never);
    expect(Object.keys(ctx).sort()).toEqual(['durationMs', 'runId', 'status', 'steps', 'toolCalls']);
    expect(JSON.stringify(ctx)).not.toContain('THE ANSWER');
  });

  it('E2: McpResponseContext holds status and latency, never a body', () => {
    const ctx = new McpResponseContext({ serverId: 's', url: 'u', statusCode: 500, latencyMs: 3, body: 'RESPONSE BODY' } as never);
    expect(Object.keys(ctx).sort()).toEqual(['latencyMs', 'serverId', 'statusCode', 'url']);
    expect(JSON.stringify(ctx)).not.toContain('RESPONSE BODY');
  });

  it('S1: McpRequestContext header values never show in inspect or JSON (names only)', () => {
    const ctx = new McpRequestContext({ serverId: 'context7', url: 'u', method: 'callTool' }).withHeaders({ authorization: `Bearer ${TOKEN}` });
    expect(ctx.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(inspect(ctx)).not.toContain(TOKEN);
    expect(JSON.stringify(ctx)).not.toContain(TOKEN);
    expect(JSON.stringify(ctx)).toContain('authorization');
  });

  it('S1: util.inspect of a ToolResultContext does not print the result text', () => {
    const ctx = new ToolResultContext({ ...request, result: 'VERY PRIVATE RESULT' });
    expect(inspect(ctx)).not.toContain('VERY PRIVATE RESULT');
    expect(inspect(ctx)).toContain('fs/readFile');
    expect(ctx.result).toBe('VERY PRIVATE RESULT');
  });
});
