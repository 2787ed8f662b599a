/**
 * SPEC G1 (tool access): a call runs, waits for approval or is handed out as deferred only if its tool was
 * offered to this agent's model in this operation. Anything else is published as a `tool_not_available`
 * tool error (content naming the tool, cut to 200 characters), `on_tool_error` / `onToolCallError` fire
 * with that type, the timeline shows it, and the run goes on. Every test counts executions: zero.
 */
import { Injectable } from '@nestjs/common';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { OnHook, type HookInvocation, McpRequestContext, type OnToolCallErrorEvent, type ToolCallContext } from '../../../src/index.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import type { StoredMessage } from '../../../src/runtime/runtime-store.port.js';
import { completion, sendJson, startChatCompletionsServer, type ChatCompletionsServer, type RecordedCall } from '../models/chat-completions-server.js';
import { startMcpServer, type TestMcpServer } from '../mcp/mcp-test-server.js';
import { appDatabases, type DriverName } from '../persistence/test-databases.js';
import { untilOperation, waiting } from '../human-loop/human-loop-kit.js';
import { bootRuntime, eventOf, guardUnhandledRejections, pointsOf, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';

const TOKEN = 'tool-access-mcp-token-93e1';
const LONG_NAME = 'x'.repeat(3_000);

const config = (kbUrl: string, otherUrl: string) => `
system: tool-access
mcpServers:
  kb: { url: "${kbUrl}" }
  other: { url: "${otherUrl}" }
models:
  deleting:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: files, apiName: delete, args: { path: "/etc" } } ]
      - content: "saw: {{lastToolResult}}"
  baited:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: files, apiName: write, args: { path: "/a" } }, { identifier: browser, apiName: open, args: { url: "https://x" } } ]
      - content: "saw: {{lastToolResult}}"
  otherServer:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: other, apiName: echo, args: { text: "hi" } }, { identifier: kb, apiName: echo, args: { text: "hi" } } ]
      - content: "saw: {{lastToolResult}}"
  delegating:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: agents, apiName: call, args: { agentId: reader, instruction: "delete it" } } ]
      - content: "boss saw: {{lastToolResult}}"
  odd:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls:
          - { identifier: "${LONG_NAME}", apiName: read, args: {} }
          - { identifier: files, apiName: "../../etc/passwd", args: {} }
          - { identifier: "fi\\0les", apiName: "re\\u0000ad", args: {} }
          - { identifier: "файлы", apiName: "читать😀", args: {} }
      - content: "saw: {{lastToolResult}}"
  approvalThenSneak:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: files, apiName: write, args: { path: "/ok" } }, { identifier: files, apiName: delete, args: { path: "/etc" } } ]
      - content: "saw: {{lastToolResult}}"
  compactThenSneak:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: files, apiName: read, args: { path: "/a" } } ]
      - toolCalls: [ { identifier: files, apiName: delete, args: { path: "/etc" } } ]
      - content: "saw: {{lastToolResult}}"
  remote: { provider: openai, model: gpt-test, baseUrlEnv: TOOL_ACCESS_LLM_BASE, apiKeyEnv: TOOL_ACCESS_LLM_KEY, timeoutSeconds: 20 }
agents:
  reader: { model: deleting, tools: [ "files/read" ] }
  baited: { model: baited, tools: [ "files/read" ], approval: [ "^files/" ], deferred: [ "^browser/" ] }
  kbOnly: { model: otherServer, tools: [ "mcp:kb" ] }
  noDelegation: { model: delegating, tools: [ "files/read" ] }
  boss: { model: delegating, tools: [ "agents/call" ] }
  odd: { model: odd, tools: [ "files/read" ] }
  writer: { model: approvalThenSneak, tools: [ "files/read", "files/write" ], approval: [ "^files/write" ] }
  compacting: { model: compactThenSneak, tools: [ "files/read" ], limits: { compactAtTokens: 10 } }
  remote: { model: remote, tools: [ "files/read" ] }
`;

const executions = { read: 0, write: 0, delete: 0 };

@Injectable()
class FileTools {
  @Tool({ identifier: 'files', apiName: 'read', description: 'reads a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } })
  read(): string {
    executions.read++;
    return 'contents';
  }

  @Tool({ identifier: 'files', apiName: 'write', description: 'writes a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } })
  write(): string {
    executions.write++;
    return 'written';
  }

  @Tool({ identifier: 'files', apiName: 'delete', description: 'deletes a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } })
  delete(): string {
    executions.delete++;
    return 'deleted';
  }
}

/** Bearer token for both MCP servers (so a call to `other` would really run if it got through). */
@Injectable()
class McpAuth {
  @OnHook('before_mcp_request')
  inject(invocation: HookInvocation): McpRequestContext {
    return invocation.payloadAs(McpRequestContext).withHeaders({ Authorization: `Bearer ${TOKEN}` });
  }
}

guardUnhandledRejections();

let kb: TestMcpServer;
let other: TestMcpServer;
let llm: ChatCompletionsServer;
const { drivers, databaseFor, describeEach } = await appDatabases('tool-access');
const apps = new Map<DriverName, RuntimeApp>();

const sqlite = (): RuntimeApp => apps.get('sqlite')!;
const toolMessages = async (app: RuntimeApp, operationId: string): Promise<StoredMessage[]> => (await app.store.messages(operationId)).filter((m) => m.role === 'tool');
const TOOL_POINTS = ['before_tool_call', 'beforeToolCall', 'transform_tool_result', 'afterToolCall', 'after_tool_call', 'on_tool_error', 'onToolCallError'] as const;

/** The published error of an unavailable call, and what the two error points and the timeline saw. */
function expectUnavailable(app: RuntimeApp, operationId: string, message: StoredMessage | undefined, name: string): void {
  expect(message).toBeDefined();
  expect(message!.content).toContain(name.slice(0, 200));
  expect(message!.content).toMatch(/not available/);
  expect(message!.content.length).toBeLessThan(300);
  expect(message!.state).toEqual({ error: { type: 'tool_not_available' } });
  const agent = app.events.filter((e) => e.operationId === operationId && e.point === 'onToolCallError').map((e) => e.payload as OnToolCallErrorEvent);
  expect(agent.some((event) => event.toolCallId === message!.toolCallId && event.error.type === 'tool_not_available')).toBe(true);
  const engine = app.events.filter((e) => e.operationId === operationId && e.point === 'on_tool_error').map((e) => e.payload as ToolCallContext);
  expect(engine.some((context) => context.toolCallId === message!.toolCallId && context.error?.type === 'tool_not_available')).toBe(true);
  expect(app.outcomes).toContainEqual(expect.objectContaining({ operationId, source: 'runtime', outcome: 'denied', errorCode: 'tool_not_available' }));
}

describe('G1 tool access', () => {
  // Inside the describe: the apps close before the file's databases are dropped.
  beforeAll(async () => {
    [kb, other, llm] = await Promise.all([startMcpServer(TOKEN), startMcpServer(TOKEN), startChatCompletionsServer()]);
    process.env.TOOL_ACCESS_LLM_BASE = llm.baseUrl;
    for (const driver of drivers) {
      apps.set(driver, await bootRuntime({ observe: true, config: config(kb.url, other.url), providers: [FileTools, McpAuth], database: databaseFor(driver, 'tool-access') }));
    }
  }, 60_000);

  afterAll(async () => {
    for (const app of apps.values()) await app.close();
    await Promise.all([kb?.close(), other?.close(), llm?.close()]);
  });

  afterEach(() => {
    executions.read = executions.write = executions.delete = 0;
  });

  it('G1: a call to a local tool the agent was not offered never runs; it is tool_not_available and the run goes on', async () => {
    const app = sqlite();
    // A mock handler cannot make an unoffered call succeed: no before-hook is asked at all.
    let mocks = 0;
    const result = await app.runtime.run('delete /etc', {
      agentId: 'reader',
      hooks: [{ id: 'mocker', type: 'beforeToolCall', handler: (event) => void (mocks++, event.mock({ content: 'mocked', success: true })) }],
    });
    expect(result.reason).toBe('done');
    expect(executions.delete).toBe(0);
    expect(mocks).toBe(0);
    expect(pointsOf(app.events, result.operationId, TOOL_POINTS)).toEqual(['on_tool_error', 'onToolCallError']);
    const [message] = await toolMessages(app, result.operationId);
    expect(message).toMatchObject({ identifier: 'files', apiName: 'delete' });
    expectUnavailable(app, result.operationId, message, 'files/delete');
    expect(result.content).toBe(`saw: ${message!.content}`);
  });

  it('G1: a name matching an approval: or deferred: regex but not offered is never held or handed out', async () => {
    const app = sqlite();
    const result = await within(app.runtime.run('write and open', { agentId: 'baited' }), 'run()');
    expect(result.reason).toBe('done');
    expect(executions.write).toBe(0);
    expect(await app.store.interventions(result.operationId)).toEqual([]);
    expect(pointsOf(app.events, result.operationId, ['beforeHumanIntervention'])).toEqual([]);
    const messages = await toolMessages(app, result.operationId);
    expect(messages.map((m) => `${m.identifier}/${m.apiName}`)).toEqual(['files/write', 'browser/open']);
    expectUnavailable(app, result.operationId, messages[0], 'files/write');
    expectUnavailable(app, result.operationId, messages[1], 'browser/open');
  });

  it('G1: a tool of an MCP server the agent does not name never reaches that server', async () => {
    const app = sqlite();
    const before = other.seen.filter((r) => r.rpcMethods.includes('tools/call')).length;
    const result = await within(app.runtime.run('echo', { agentId: 'kbOnly' }), 'run()', 20_000);
    expect(result.reason).toBe('done');
    expect(other.seen.filter((r) => r.rpcMethods.includes('tools/call')).length).toBe(before);
    const [otherCall, kbCall] = await toolMessages(app, result.operationId);
    expectUnavailable(app, result.operationId, otherCall, 'other/echo');
    // The offered server's tool still runs.
    expect(kbCall).toMatchObject({ identifier: 'kb', apiName: 'echo', content: 'echo: hi' });
  });

  it('G1: agents/call is not available to an agent that does not name it: no sub-agent starts', async () => {
    const app = sqlite();
    const result = await within(app.runtime.run('delegate', { agentId: 'noDelegation' }), 'run()');
    expect(result.reason).toBe('done');
    expect(pointsOf(app.events, result.operationId, ['beforeCallAgent', 'afterCallAgent', 'onCallAgentError'])).toEqual([]);
    expect(app.events.some((e) => e.point === 'beforeStep' && (e.payload as { parentOperationId?: string }).parentOperationId === result.operationId)).toBe(false);
    const [message] = await toolMessages(app, result.operationId);
    expectUnavailable(app, result.operationId, message, 'agents/call');
  });

  it('G1: in a sub-agent, the child is held to its own tools', async () => {
    const app = sqlite();
    const result = await within(app.runtime.run('delegate', { agentId: 'boss' }), 'run()');
    expect(result.reason).toBe('done');
    expect(executions.delete).toBe(0);
    const child = app.events.find((e) => e.point === 'afterCallAgent' && e.operationId === result.operationId)?.payload as { subOperationId: string };
    const [message] = await toolMessages(app, child.subOperationId);
    expectUnavailable(app, child.subOperationId, message, 'files/delete');
    expect(result.content).toContain('not available');
  });

  it('G1: after compaction, an unoffered call is still refused', async () => {
    const app = sqlite();
    const result = await within(app.runtime.run('read then delete', { agentId: 'compacting' }), 'run()');
    expect(result.reason).toBe('done');
    expect(pointsOf(app.events, result.operationId, ['afterCompact']).length).toBeGreaterThan(0);
    expect(executions.read).toBe(1);
    expect(executions.delete).toBe(0);
    const [, second] = await toolMessages(app, result.operationId);
    expectUnavailable(app, result.operationId, second, 'files/delete');
  });

  it('G1: after a resume (an approval), the unoffered call of the same step never runs', async () => {
    const app = sqlite();
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'writer', prompt: 'write then delete' });
    await untilOperation(app.store, operationId, waiting);
    const items = await app.store.interventions(operationId);
    // Only the offered call waits for a human.
    expect(items.map((i) => `${i.identifier}/${i.apiName}`)).toEqual(['files/write']);
    await app.runtime.approve(operationId, items[0]!.toolCallId);
    const result = await within(done, 'done');
    expect(result.reason).toBe('done');
    expect(executions.write).toBe(1);
    expect(executions.delete).toBe(0);
    const [written, refused] = await toolMessages(app, operationId);
    expect(written).toMatchObject({ identifier: 'files', apiName: 'write', content: 'written' });
    expectUnavailable(app, operationId, refused, 'files/delete');
  });

  it('G1: 3,000-character and odd names (../, NUL, unicode) from an OpenAI-compatible model are tool_not_available; the model is offered only its tools', async () => {
    const app = sqlite();
    llm.handle((call: RecordedCall, res) => {
      const tool = (call.body.messages as Array<{ role: string; content: string }>).findLast((m) => m.role === 'tool');
      if (tool) return sendJson(res, 200, completion({ content: `saw: ${tool.content}` }));
      sendJson(
        res,
        200,
        completion({
          content: null,
          tool_calls: [
            { id: 'call_long', type: 'function', function: { name: 'y'.repeat(3_000), arguments: '{}' } },
            { id: 'call_delete', type: 'function', function: { name: 'files__delete', arguments: '{"path":"/etc"}' } },
            { id: 'call_dots', type: 'function', function: { name: '../../etc/passwd', arguments: '{}' } },
            { id: 'call_nul', type: 'function', function: { name: 'files__re\u0000ad', arguments: '{}' } },
            { id: 'call_unicode', type: 'function', function: { name: 'файлы__читать😀', arguments: '{}' } },
            // An id no column or provider should hold: replaced by one of ours.
            { id: 'id\u0000'.repeat(100), type: 'function', function: { name: 'files__write', arguments: '{}' } },
          ],
        }),
      );
    });
    const result = await within(app.runtime.run('go', { agentId: 'remote' }), 'run()', 20_000);
    expect(result.reason).toBe('done');
    expect(executions.delete).toBe(0);
    const offered = (llm.calls[0]!.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
    expect(offered).toEqual(['files__read']);
    const [long, deleted, dots, nul, unicode, oddId] = await toolMessages(app, result.operationId);
    expect(long!.content.length).toBeLessThan(300);
    expect(long!.state).toEqual({ error: { type: 'tool_not_available' } });
    expectUnavailable(app, result.operationId, deleted, 'files/delete');
    for (const message of [dots, nul, unicode, oddId]) expect(message!.state).toEqual({ error: { type: 'tool_not_available' } });
    expect(nul!.content).not.toContain('\u0000');
    expect(unicode).toMatchObject({ identifier: 'файлы', apiName: 'читать😀' });
    expect(oddId!.toolCallId).toMatch(/^call_[0-9a-f-]{36}$/);
    expect(executions.write + executions.read).toBe(0);
  });

  describeEach('on %s', (driver) => {
    it('G1, G6: long and odd model-emitted names are tool_not_available (never a failed operation)', async () => {
      const app = apps.get(driver)!;
      const result = await within(app.runtime.run('odd names', { agentId: 'odd' }), 'run()');
      expect(result.reason).toBe('done');
      expect(executions.read).toBe(0);
      const messages = await toolMessages(app, result.operationId);
      expect(messages).toHaveLength(4);
      for (const message of messages) {
        expect(message.state).toEqual({ error: { type: 'tool_not_available' } });
        expect(message.content.length).toBeLessThan(300);
        expect(message.content).not.toContain('\u0000');
        expect(message.identifier!.length).toBeLessThanOrEqual(255);
      }
      expect(messages[0]!.content).toContain('x'.repeat(200));
      expect(messages[0]!.content).not.toContain('x'.repeat(201));
      expect(messages[1]).toMatchObject({ identifier: 'files', apiName: '../../etc/passwd' });
      expect(messages[3]).toMatchObject({ identifier: 'файлы', apiName: 'читать😀' });
      expect(eventOf(app.events, result.operationId, 'onToolCallError')).toBeDefined();
    });
  });
});
