/**
 * SPEC O1, O2, O4 on a real run: with an OpenTelemetry SDK registered (in-memory exporter), one operation
 * with an allowed, a denied, a mocked and an MCP call produces the GenAI span tree — `invoke_agent`, `chat`
 * per model call, `execute_tool` per call with its outcome, a span per control hook and webhook delivery,
 * the MCP HTTP requests as client spans — and a loopback webhook receiver and a real MCP server see a
 * `traceparent` of the operation's trace. A marker sweep finds no prompt, argument, result or secret on
 * any span.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Injectable } from '@nestjs/common';
import { SpanKind } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { HookInvocation, McpRequestContext, OnHook, type BeforeToolCallEvent } from '../../../src/index.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { bootRuntime, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { startMcpServer, type TestMcpServer } from '../mcp/mcp-test-server.js';
import { installTestSdk, parentOf, traceIdOf, type TestSdk } from './otel-test-sdk.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

const PROMPT_MARKER = 'prompt-marker-7f3a';
const ARG_MARKER = 'argument-marker-91c2';
const RESULT_MARKER = 'result-marker-5d0e';
const SECRET_MARKER = 'secret-marker-c4b8';
const MCP_TOKEN = `mcp-token-${SECRET_MARKER}`;

const config = (mcpUrl: string) => scriptedConfig({
  system: 'tracing-span-tree',
  mcpServers: { kb: { url: mcpUrl } },
  models: {
    planner: [toolCalls(call('clock/now', { zone: ARG_MARKER }), call('vault/read', { key: ARG_MARKER }), call('dice/roll'), call('kb/echo', { text: ARG_MARKER })), answer('finished: {{lastToolResult}}')],
  },
  agents: {
    planner: { model: 'planner', tools: ['clock/*', 'vault/*', 'dice/*', 'mcp:kb'] },
  },
});

@Injectable()
class TracedTools {
  @Tool({ identifier: 'clock', apiName: 'now', description: 'the time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } })
  now(): string {
    return `noon ${RESULT_MARKER}`;
  }

  @Tool({ identifier: 'vault', apiName: 'read', description: 'a secret', parameters: { type: 'object', properties: { key: { type: 'string' } } } })
  read(): string {
    return `never ${RESULT_MARKER}`;
  }

  @Tool({ identifier: 'dice', apiName: 'roll', description: 'a number', parameters: { type: 'object', properties: {} } })
  roll(): string {
    return 'never rolled';
  }
}

@Injectable()
class Policy {
  @OnHook('beforeToolCall', { order: -1 })
  mockDice(event: BeforeToolCallEvent) {
    if (event.identifier === 'dice') event.mock({ content: `six ${RESULT_MARKER}`, success: true });
  }

  @OnHook('beforeToolCall')
  denyVault(event: BeforeToolCallEvent) {
    return event.identifier === 'vault' ? { decision: 'deny' as const, reason: 'not for you' } : undefined;
  }

  @OnHook('afterStep')
  observe(): void {
    // observe-only: a span event, not a span
  }

  @OnHook('before_mcp_request')
  auth(invocation: HookInvocation): McpRequestContext {
    return invocation.payloadAs(McpRequestContext).withHeaders({ Authorization: `Bearer ${MCP_TOKEN}` });
  }
}

/** A policy webhook on loopback: allows everything, remembers the trace context each request carried. */
async function startReceiver(): Promise<{ url: string; traceparents: string[]; close(): Promise<void> }> {
  const traceparents: string[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (typeof req.headers.traceparent === 'string') traceparents.push(req.headers.traceparent);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ decision: 'allow' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/policy`,
    traceparents,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let sdk: TestSdk;
let kb: TestMcpServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let app: RuntimeApp;

beforeAll(async () => {
  sdk = installTestSdk();
  kb = await startMcpServer(MCP_TOKEN);
  receiver = await startReceiver();
  app = await bootRuntime({ observe: true, config: config(kb.url), providers: [TracedTools, Policy], webhooks: { allowNetworks: ['127.0.0.0/8'] } });
}, 30_000);

afterAll(async () => {
  await app?.close();
  await kb?.close();
  await receiver?.close();
  await sdk?.shutdown();
});

function named(spans: ReadableSpan[], name: string): ReadableSpan[] {
  return spans.filter((span) => span.name === name);
}

describe('SPEC O1/O2: the spans of one operation', () => {
  let spans: ReadableSpan[];
  let operationId: string;

  beforeAll(async () => {
    sdk.reset();
    const started = await app.runtime.execAgent({
      agentId: 'planner',
      prompt: `please ${PROMPT_MARKER}`,
      hooks: [{ id: 'policy-webhook', type: 'beforeToolCall', matcher: '^clock/now$', webhook: { url: receiver.url, headers: { authorization: `Bearer ${SECRET_MARKER}` } } }],
    });
    operationId = started.operationId;
    expect(await within(started.done, 'done', 20_000)).toMatchObject({ reason: 'done' });
    spans = sdk.spans();
  }, 30_000);

  it('O1: one invoke_agent span is the root; every span of the run is in its trace', () => {
    const [root] = named(spans, 'invoke_agent planner');
    expect(root).toBeDefined();
    expect(root!.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner', 'nest_agent_hooks.operation.id': operationId, 'nest_agent_hooks.operation.reason': 'done' });
    const traceId = root!.spanContext().traceId;
    const ofRun = spans.filter((span) => span.attributes['nest_agent_hooks.operation.id'] === operationId || span.name.endsWith('mcp:kb'));
    expect(ofRun.length).toBeGreaterThan(6);
    expect(ofRun.every((span) => span.spanContext().traceId === traceId)).toBe(true);
  });

  it('O1: a chat span per model call, with the request model, the usage and the finish reason', () => {
    const chats = named(spans, 'chat planner');
    expect(chats).toHaveLength(2);
    const root = named(spans, 'invoke_agent planner')[0]!;
    for (const chat of chats) {
      expect(parentOf(chat)).toBe(root.spanContext().spanId);
      expect(chat.kind).toBe(SpanKind.CLIENT);
      expect(chat.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'planner', 'gen_ai.provider.name': 'scripted' });
      expect(typeof chat.attributes['gen_ai.usage.input_tokens']).toBe('number');
      expect(typeof chat.attributes['gen_ai.usage.output_tokens']).toBe('number');
    }
    expect(chats.map((chat) => chat.attributes['gen_ai.response.finish_reasons'])).toEqual([['tool_calls'], ['stop']]);
  });

  it('O1: an execute_tool span per call with its outcome: ok, denied, mocked, ok (MCP)', () => {
    const outcome = (name: string) => named(spans, `execute_tool ${name}`).map((span) => span.attributes['nest_agent_hooks.tool.outcome']);
    expect(outcome('clock/now')).toEqual(['ok']);
    expect(outcome('vault/read')).toEqual(['denied']);
    expect(outcome('dice/roll')).toEqual(['mocked']);
    expect(outcome('kb/echo')).toEqual(['ok']);
    const kbSpan = named(spans, 'execute_tool kb/echo')[0]!;
    expect(kbSpan.attributes).toMatchObject({ 'gen_ai.tool.name': 'kb/echo', 'gen_ai.tool.type': 'extension' });
    expect(typeof kbSpan.attributes['gen_ai.tool.call.id']).toBe('string');
  });

  it('O1: control hooks and the webhook delivery are spans under their call; observe-only hooks are events', () => {
    const vault = named(spans, 'execute_tool vault/read')[0]!;
    const controls = named(spans, 'hook beforeToolCall').filter((span) => parentOf(span) === vault.spanContext().spanId);
    expect(controls.map((span) => span.attributes['nest_agent_hooks.hook.outcome'])).toContain('denied');
    const clock = named(spans, 'execute_tool clock/now')[0]!;
    const webhook = named(spans, 'webhook beforeToolCall').filter((span) => parentOf(span) === clock.spanContext().spanId);
    expect(webhook).toHaveLength(1);
    // The span says what the timeline says of the same invocation.
    const row = app.outcomes.find((outcome) => outcome.operationId === operationId && outcome.hookId === 'policy-webhook');
    expect(row).toBeDefined();
    expect(webhook[0]!.attributes).toMatchObject({ 'nest_agent_hooks.hook.id': 'policy-webhook', 'nest_agent_hooks.hook.source': 'caller', 'nest_agent_hooks.hook.outcome': row!.outcome, 'nest_agent_hooks.hook.transport': 'webhook' });
    const events = spans.flatMap((span) => span.events).filter((event) => event.name === 'hook afterStep');
    expect(events.length).toBeGreaterThan(0);
  });

  it('O1/O2: MCP HTTP requests are client spans under the call, and the server sees their traceparent', () => {
    const kbSpan = named(spans, 'execute_tool kb/echo')[0]!;
    const requests = spans.filter((span) => span.name === 'tools/call mcp:kb');
    expect(requests).toHaveLength(1);
    expect(requests[0]!.kind).toBe(SpanKind.CLIENT);
    expect(parentOf(requests[0]!)).toBe(kbSpan.spanContext().spanId);
    expect(requests[0]!.attributes).toMatchObject({ 'http.response.status_code': 200, 'mcp.method.name': 'tools/call' });
    const seen = kb.seen.filter((request) => request.rpcMethods.includes('tools/call'));
    expect(seen).toHaveLength(1);
    expect(seen[0]!.traceparent).toBe(`00-${requests[0]!.spanContext().traceId}-${requests[0]!.spanContext().spanId}-01`);
  });

  it('O2: the loopback webhook receiver sees a traceparent of the operation trace', () => {
    const root = named(spans, 'invoke_agent planner')[0]!;
    expect(receiver.traceparents).toHaveLength(1);
    expect(traceIdOf(receiver.traceparents[0])).toBe(root.spanContext().traceId);
  });

  it('O4: no span attribute or event carries a prompt, an argument, a result or a secret', () => {
    const text = JSON.stringify(spans.map((span) => ({ name: span.name, attributes: span.attributes, events: span.events.map((e) => ({ name: e.name, attributes: e.attributes })), status: span.status })));
    for (const marker of [PROMPT_MARKER, ARG_MARKER, RESULT_MARKER, SECRET_MARKER]) expect(text).not.toContain(marker);
  });
});
