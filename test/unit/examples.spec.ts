import { Test } from '@nestjs/testing';
import { AuditHooks, ExampleAppModule } from '../../examples/nest-app/audit-hooks.js';
import { HookDispatcher, ToolCallContext, ToolResultContext, type AfterToolCallEvent, type BeforeToolCallObservationEvent } from '../../src/index.js';

function toolEvent(identifier: string, apiName: string): BeforeToolCallObservationEvent {
  return {
    id: 'e1',
    type: 'beforeToolCall',
    operationId: 'op-1',
    agentId: 'assistant',
    stepIndex: 0,
    timestamp: new Date().toISOString(),
    toolCallId: 'call-1',
    assistantMessageId: 'msg-1',
    identifier,
    apiName,
    args: {},
    callIndex: 0,
    executor: 'server',
  };
}

describe('examples/nest-app', () => {
  it('runs the documented hooks: a deny policy, a mock, a transform and an audit', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [ExampleAppModule] }).compile();
    await moduleRef.init();
    const dispatcher = moduleRef.get(HookDispatcher);
    const hooks = moduleRef.get(AuditHooks);

    const denied = await dispatcher.gateToolCall(toolEvent('fs', 'deleteFile'));
    expect(denied.verdict).toMatchObject({ outcome: 'denied', reason: 'Deleting files is not allowed here.', error: 'hook_denied' });

    const clock = await dispatcher.gateToolCall(toolEvent('clock', 'now'));
    expect(clock).toEqual({ mock: { isMocked: true, result: { content: '2026-01-01T00:00:00Z', success: true } }, verdict: { outcome: 'allowed' } });

    const big = new ToolResultContext({ runId: 'op-1', toolCallId: 'call-2', identifier: 'web', apiName: 'fetch', provider: 'local', result: 'x'.repeat(9_000) });
    const trimmed = await dispatcher.transform('transform_tool_result', big);
    expect(trimmed.result).toBe(`${'x'.repeat(8_000)}\n… [truncated]`);

    await dispatcher.dispatch('after_tool_call', new ToolCallContext({ runId: 'op-1', toolCallId: 'call-2', identifier: 'web', apiName: 'fetch', provider: 'local', status: 'ok', latencyMs: 12 }));
    const after = { ...toolEvent('clock', 'now'), type: 'afterToolCall', result: { content: 'x', success: true }, mocked: true } as AfterToolCallEvent;
    expect(await dispatcher.gateToolResult(after)).toEqual({ outcome: 'allowed' });
    expect(hooks.audited).toEqual(['web/fetch ok 12ms', 'clock/now mocked=true']);
    await moduleRef.close();
  });
});
