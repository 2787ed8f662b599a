/**
 * A full agent run (scripted model) that calls a tool of a REAL MCP server built with the SDK (T5: MCP
 * tools go through the same event path as local ones). The server requires a bearer token, added by a
 * `before_mcp_request` hook. Checked: the published tool message, and the tool events' identity — the
 * identifier is the server id, `toolSource` is `mcp`, the engine provider `mcp:<server id>`.
 */
import { Injectable } from '@nestjs/common';
import { HookInvocation, McpRequestContext, OnHook, ToolCallContext, type AfterToolCallEvent, type BeforeToolCallObservationEvent } from '../../../src/index.js';
import { bootRuntime, eventOf, guardUnhandledRejections, pointsOf, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { startMcpServer, type TestMcpServer } from './mcp-test-server.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

const TOKEN = 'mcp-agent-run-token-41d7';

const config = (url: string) => scriptedConfig({
  system: 'mcp-agent-run-test',
  mcpServers: { kb: { url: url } },
  models: {
    default: [toolCalls(call('kb/echo', { text: '{{prompt}}' })), answer('The knowledge base said: {{lastToolResult}}')],
  },
  agents: {
    researcher: { model: 'default', tools: ['mcp:kb'] },
  },
});

/** Adds the bearer token for `kb`; remembers which run each tools/call request belonged to. */
@Injectable()
class KbAuth {
  readonly toolCallRuns: (string | undefined)[] = [];

  @OnHook('before_mcp_request')
  inject(invocation: HookInvocation): McpRequestContext {
    const request = invocation.payloadAs(McpRequestContext);
    if (request.method === 'tools/call') this.toolCallRuns.push(invocation.runContext?.runId);
    return request.withHeaders({ Authorization: `Bearer ${TOKEN}` });
  }
}

guardUnhandledRejections();

let kb: TestMcpServer;
let app: RuntimeApp;

beforeAll(async () => {
  kb = await startMcpServer(TOKEN);
  app = await bootRuntime({ observe: true, config: config(kb.url), providers: [KbAuth] });
}, 30_000);

afterAll(async () => {
  await app?.close();
  await kb?.close();
});

describe('T5 an agent run calling an MCP tool', () => {
  it('publishes the MCP result and reports the call with identifier = server id, toolSource mcp', async () => {
    const observed: AfterToolCallEvent[] = [];
    const { operationId, done } = await app.runtime.execAgent({
      agentId: 'researcher',
      prompt: 'hello',
      hooks: [{ id: 'watch', type: 'afterToolCall', matcher: '^kb/echo$', handler: (event) => void observed.push(event) }],
    });
    const result = await within(done, 'done', 20_000);
    expect(result).toMatchObject({ reason: 'done', content: 'The knowledge base said: echo: hello' });

    // The server really ran it, authenticated, on behalf of this run.
    expect(kb.seen.filter((r) => r.rpcMethods.includes('tools/call'))).toEqual([expect.objectContaining({ authorized: true, status: 200 })]);
    expect(app.moduleRef.get(KbAuth).toolCallRuns).toEqual([operationId]);

    const messages = await app.store.messages(operationId);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    const call = messages[1]!.toolCalls![0]!;
    expect(messages[2]).toMatchObject({ role: 'tool', content: 'echo: hello', toolCallId: call.id, identifier: 'kb', apiName: 'echo' });
    expect(messages[2]!.error).toBeUndefined();

    // T1/T3/T4: the handler's event and the dispatched one agree on the call's identity.
    expect(observed).toHaveLength(1);
    expect(observed[0]).toMatchObject({
      type: 'afterToolCall',
      operationId,
      toolCallId: call.id,
      identifier: 'kb',
      apiName: 'echo',
      toolSource: 'mcp',
      executor: 'server',
      args: { text: 'hello' },
      result: { content: 'echo: hello', success: true },
      mocked: false,
    });
    const before = eventOf(app.events, operationId, 'beforeToolCall')!.payload as BeforeToolCallObservationEvent;
    expect(before).toMatchObject({ identifier: 'kb', apiName: 'echo', toolSource: 'mcp', toolCallId: call.id });
    const engine = eventOf(app.events, operationId, 'after_tool_call')!.payload as ToolCallContext;
    expect(engine).toMatchObject({ identifier: 'kb', apiName: 'echo', provider: 'mcp:kb', status: 'ok' });

    expect(pointsOf(app.events, operationId, ['before_tool_call', 'beforeToolCall', 'transform_tool_result', 'afterToolCall', 'after_tool_call'])).toEqual([
      'before_tool_call',
      'beforeToolCall',
      'transform_tool_result',
      'afterToolCall',
      'after_tool_call',
    ]);
  });
});
