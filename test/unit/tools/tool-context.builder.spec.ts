import { toolCallIdempotencyKey } from '../../../src/runtime/tools/idempotency-key.js';
import { ToolCallContext, ToolRequestContext, ToolResultContext } from '../../../src/index.js';
import { hasBrand } from '../../../src/hooks/context-brand.js';
import {
  buildToolCallHookContext,
  buildToolRequestContext,
  toolCallContext,
  toolResultContext,
  type ToolCallContextInput,
} from '../../../src/runtime/tools/tool-context.builder.js';

const SECRET_ARG = 'arg-value-that-must-stay-out-7731';

function input(overrides: Partial<ToolCallContextInput> = {}): ToolCallContextInput {
  return {
    toolCallId: 'call-1',
    assistantMessageId: 'msg-1',
    identifier: 'fs',
    apiName: 'readFile',
    args: { path: SECRET_ARG, nested: { deep: [1, 2] } },
    callIndex: 2,
    stepIndex: 3,
    operationId: 'op-1',
    tool: { source: 'local', deferred: false },
    ...overrides,
  };
}

describe('tools: buildToolCallHookContext (SPEC T1–T3)', () => {
  it('T1: carries every required field with the effective args', () => {
    const context = buildToolCallHookContext(input());
    expect(context).toEqual({
      toolCallId: 'call-1',
      assistantMessageId: 'msg-1',
      identifier: 'fs',
      apiName: 'readFile',
      args: { path: SECRET_ARG, nested: { deep: [1, 2] } },
      callIndex: 2,
      stepIndex: 3,
      operationId: 'op-1',
      idempotencyKey: toolCallIdempotencyKey('op-1', 'call-1'),
      executor: 'server',
      toolSource: 'local',
    });
  });

  it('T2: correlation ids from the run; userId = runtime.userId ?? origin.userId', () => {
    const both = buildToolCallHookContext(
      input({
        runtime: { userId: 'runtime-user', agentId: 'assistant', threadId: 'th-1', parentOperationId: 'op-0' },
        origin: { userId: 'origin-user', topicId: 'topic-1', threadId: 'th-origin', sourceMessageId: 'm-src' },
      }),
    );
    expect(both).toMatchObject({
      userId: 'runtime-user',
      agentId: 'assistant',
      threadId: 'th-1',
      parentOperationId: 'op-0',
      topicId: 'topic-1',
      sourceMessageId: 'm-src',
    });
    expect(buildToolCallHookContext(input({ runtime: {}, origin: { userId: 'origin-user' } })).userId).toBe('origin-user');
    expect('userId' in buildToolCallHookContext(input())).toBe(false);
  });

  it('T3: toolSource and executor follow the tool; execution plan fields pass through; overrides win', () => {
    expect(buildToolCallHookContext(input({ tool: { source: 'mcp', deferred: false } }))).toMatchObject({ toolSource: 'mcp', executor: 'server' });
    expect(buildToolCallHookContext(input({ tool: { source: 'local', deferred: true } }))).toMatchObject({ executor: 'client' });
    const planned = buildToolCallHookContext(input({ toolSource: 'sandbox', executor: 'client', executionTarget: 'sandbox-1', activeDeviceId: 'dev-9' }));
    expect(planned).toMatchObject({ toolSource: 'sandbox', executor: 'client', executionTarget: 'sandbox-1', activeDeviceId: 'dev-9' });
    expect('toolSource' in buildToolCallHookContext(input({ tool: undefined }))).toBe(false);
  });

  it('the context and its args are frozen copies: a hook cannot change what the tool runs with', () => {
    const args = { path: 'a.txt', nested: { deep: [1] } };
    const context = buildToolCallHookContext(input({ args }));
    expect(Object.isFrozen(context)).toBe(true);
    expect(Object.isFrozen(context.args)).toBe(true);
    expect(Object.isFrozen((context.args.nested as { deep: number[] }).deep)).toBe(true);
    expect(() => {
      (context.args as Record<string, unknown>).path = '/etc/passwd';
    }).toThrow(TypeError);
    expect(args.path).toBe('a.txt');
    expect(context.args).not.toBe(args);
  });
});

describe('tools: engine contexts carry no args (E9, S1)', () => {
  it('buildToolRequestContext: who and what, never the arguments, even when handed them', () => {
    const request = buildToolRequestContext({ ...input(), runId: 'op-1', tool: { source: 'mcp', serverId: 'kb', identifier: 'kb' } } as never);
    expect(hasBrand(request, ToolRequestContext.brand)).toBe(true);
    expect(request).toMatchObject({ runId: 'op-1', toolCallId: 'call-1', identifier: 'fs', apiName: 'readFile', toolName: 'fs/readFile', provider: 'mcp:kb' });
    expect(Object.keys(request)).not.toContain('args');
    expect(JSON.stringify(request)).not.toContain(SECRET_ARG);
    expect(buildToolRequestContext({ runId: 'r', operationId: 'r', toolCallId: 'c', identifier: 'x', apiName: 'y' }).provider).toBe('unknown');
    expect(buildToolRequestContext({ runId: 'r', operationId: 'r', toolCallId: 'c', identifier: 'x', apiName: 'y', tool: { source: 'local', identifier: 'x' } }).provider).toBe(
      'local',
    );
  });

  it('toolCallContext: status, latency and the error TYPE only', () => {
    const request = buildToolRequestContext({ runId: 'op-1', operationId: 'op-1', toolCallId: 'call-1', identifier: 'fs', apiName: 'readFile' });
    const failed = toolCallContext(request, 'error', 12.5, 'ENOENTError');
    expect(hasBrand(failed, ToolCallContext.brand)).toBe(true);
    expect(failed).toMatchObject({ status: 'error', latencyMs: 12.5, error: { type: 'ENOENTError' }, toolName: 'fs/readFile' });
    expect(Object.keys(failed.error!)).toEqual(['type']);
    const ok = toolCallContext(request, 'ok', 3);
    expect(ok.status).toBe('ok');
    expect(ok.error).toBeUndefined();
    expect(Object.keys(ok)).not.toContain('args');
  });

  it('toolResultContext is the one engine context with result text', () => {
    const request = buildToolRequestContext({ runId: 'op-1', operationId: 'op-1', toolCallId: 'call-1', identifier: 'fs', apiName: 'readFile' });
    const result = toolResultContext(request, 'file body');
    expect(hasBrand(result, ToolResultContext.brand)).toBe(true);
    expect(result.result).toBe('file body');
    expect(result.toolCallId).toBe('call-1');
  });
});

describe('F1 the engine-family tool contexts carry the idempotency key', () => {
  it('F1: before_tool_call, after_tool_call, on_tool_error and transform_tool_result contexts carry the call\'s key, kept by withResult', () => {
    const key = toolCallIdempotencyKey('op-1', 'call-1');
    const request = buildToolRequestContext({ runId: 'op-1', operationId: 'op-1', toolCallId: 'call-1', identifier: 'fs', apiName: 'readFile' });
    const failed = toolCallContext(request, 'error', 1, 'Boom', true);
    const result = toolResultContext(request, 'body');
    for (const context of [request, toolCallContext(request, 'ok', 1), failed, result, result.withResult('other')]) expect(context.idempotencyKey).toBe(key);
    // Safe metadata (E9): an opaque hash, serialized with the rest, never the arguments.
    expect(JSON.parse(JSON.stringify(failed))).toMatchObject({ idempotencyKey: key, toolCallId: 'call-1', willRetry: true });
    expect(buildToolRequestContext({ runId: 'op-1', operationId: 'op-1', toolCallId: 'call-2', identifier: 'fs', apiName: 'readFile' }).idempotencyKey).not.toBe(key);
  });

  it('F1: a context built by hand without a key has no idempotencyKey property (E9 key lists unchanged)', () => {
    const bare = new ToolRequestContext({ runId: 'r', toolCallId: 'c', identifier: 'x', apiName: 'y', provider: 'local' });
    expect(Object.keys(bare)).not.toContain('idempotencyKey');
    expect(Object.keys(new ToolResultContext({ runId: 'r', toolCallId: 'c', identifier: 'x', apiName: 'y', provider: 'local', result: 'r' }).withResult('s'))).not.toContain('idempotencyKey');
  });
});
