/**
 * SPEC F1 on both drivers: one idempotency key per tool call. A real MCP server (the SDK's) records the key
 * of each `tools/call` from its `_meta` and from its `Idempotency-Key` header; a local tool records the one
 * in its context; the tool events, a webhook payload, the `execute_tool` span and the approval's pending
 * item carry the same key. Two calls never share one; an approved call runs (in a later step execution, on
 * another app instance sharing the database) with the key its pending item announced.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Injectable } from '@nestjs/common';
import type { AgentHook, LocalToolContext, ToolCallHookContext } from '../../../src/index.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { operationView, type PendingToolView } from '../../../src/runtime/reading/operation-views.js';
import { appDatabases, type DriverName } from '../persistence/test-databases.js';
import { bootRuntime, eventually, guardUnhandledRejections, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { installTestSdk, type TestSdk } from '../tracing/otel-test-sdk.js';
import { startKeyedMcpServer, type KeyedMcpServer } from './keyed-mcp-server.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

const config = (url: string) => scriptedConfig({
  system: 'f1-idempotency-key',
  mcpServers: { pay: { url: url } },
  models: {
    paying: [toolCalls(call('pay/charge', { amount: 5 }), call('ledger/record', { entry: 'a' })), toolCalls(call('ledger/record', { entry: 'b' })), answer('paid')],
    approving: [toolCalls(call('ledger/record', { entry: 'approved' })), answer('recorded')],
  },
  agents: {
    payer: { model: 'paying', tools: ['mcp:pay', 'ledger/*'] },
    approver: { model: 'approving', tools: ['ledger/*'], approval: ['^ledger/record$'] },
  },
});

/** What the local tool was handed, by tool call id. */
const localKeys = new Map<string, string>();

@Injectable()
class Ledger {
  @Tool({ identifier: 'ledger', apiName: 'record', description: 'records an entry', parameters: { type: 'object', properties: { entry: { type: 'string' } } } })
  record(args: Record<string, unknown>, context: LocalToolContext): string {
    localKeys.set(context.toolCallId, context.idempotencyKey);
    return `recorded ${String(args.entry)}`;
  }
}

guardUnhandledRejections();

const databases = await appDatabases('f1-key');
let pay: KeyedMcpServer;
let sdk: TestSdk;
let receiver: Server;
let receiverUrl: string;
const webhookBodies: Record<string, unknown>[] = [];

beforeAll(async () => {
  sdk = installTestSdk();
  pay = await startKeyedMcpServer();
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      webhookBodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
      res.writeHead(204);
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});

afterAll(async () => {
  await pay?.close();
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  await sdk?.shutdown();
});

databases.describeEach('F1 one idempotency key per call (%s)', (driver: DriverName) => {
  let app: RuntimeApp;
  let other: RuntimeApp;
  beforeAll(async () => {
    const database = databases.databaseFor(driver, 'f1');
    app = await bootRuntime({ config: config(pay.url), providers: [Ledger], database, webhooks: { allowNetworks: ['127.0.0.0/8'] } });
    other = await bootRuntime({ config: config(pay.url), providers: [Ledger], database });
  }, 30_000);
  afterAll(async () => {
    await other?.close();
    await app?.close();
  });

  it('F1: the MCP server gets the key in _meta and as Idempotency-Key; the local tool, the events, the webhook and the span carry the same key per call', async () => {
    pay.calls.length = 0;
    webhookBodies.length = 0;
    sdk.reset();
    const seen: { point: string; toolCallId: string; key: string | undefined }[] = [];
    const watch = (type: 'beforeToolCall' | 'afterToolCall'): AgentHook => ({
      id: `watch-${type}`,
      type,
      handler: (event: ToolCallHookContext) => void seen.push({ point: type, toolCallId: event.toolCallId, key: event.idempotencyKey }),
    });
    const { operationId, done } = await app.runtime.execAgent({
      agentId: 'payer',
      prompt: 'pay',
      hooks: [watch('beforeToolCall'), watch('afterToolCall'), { id: 'audit', type: 'afterToolCall', webhook: { url: receiverUrl } }],
    });
    expect(await within(done, 'the payer finishes', 20_000)).toMatchObject({ reason: 'done', content: 'paid' });

    const calls = (await app.store.messages(operationId)).filter((m) => m.role === 'assistant').flatMap((m) => m.toolCalls ?? []);
    expect(calls).toHaveLength(3);
    const keyOf = new Map(seen.filter((s) => s.point === 'beforeToolCall').map((s) => [s.toolCallId, s.key]));
    const keys = calls.map((call) => keyOf.get(call.id));
    // One key per call, each a non-trivial string, no two alike.
    for (const key of keys) expect(key).toMatch(/^nah_[A-Za-z0-9_-]{43}$/);
    expect(new Set(keys).size).toBe(3);
    // The three tool events of a call agree.
    for (const s of seen) expect(s.key).toBe(keyOf.get(s.toolCallId));

    // MCP: the same key in `_meta` and in the header.
    const charge = calls.find((call) => call.apiName === 'charge')!;
    expect(pay.calls).toEqual([{ tool: 'charge', metaKey: keyOf.get(charge.id), headerKey: keyOf.get(charge.id) }]);
    // Local: the context's key.
    for (const call of calls.filter((c) => c.apiName === 'record')) expect(localKeys.get(call.id)).toBe(keyOf.get(call.id));

    // The webhook payload (B1) and the execute_tool span (O1).
    await eventually(() => webhookBodies.length === 3, 'the three afterToolCall webhooks');
    expect(new Set(webhookBodies.map((body) => body.idempotencyKey))).toEqual(new Set(keys));
    const spans = sdk.spans().filter((span) => span.name.startsWith('execute_tool ') && span.attributes['nest_agent_hooks.operation.id'] === operationId);
    expect(new Set(spans.map((span) => span.attributes['nest_agent_hooks.tool.idempotency_key']))).toEqual(new Set(keys));
  });

  it('F1: an approval call announces its key in the pending item; approved on another instance, the tool runs with that key', async () => {
    const announced: (string | undefined)[] = [];
    const { operationId, done } = await app.runtime.execAgent({
      agentId: 'approver',
      prompt: 'record it',
      hooks: [{ id: 'ask', type: 'beforeHumanIntervention', handler: (event) => void announced.push(...event.pendingTools.map((tool) => tool.idempotencyKey)) }],
    });
    // The pending item as GET /v1/operations/:id shows it, read by each instance.
    const pendingOf = async (instance: RuntimeApp): Promise<PendingToolView[]> =>
      operationView((await instance.store.getOperation(operationId))!, await instance.store.interventions(operationId)).pendingTools ?? [];
    await eventually(async () => (await pendingOf(app)).length === 1, 'the approval is pending');
    const pending = (await pendingOf(app))[0]!;
    expect(pending.idempotencyKey).toMatch(/^nah_/);
    expect(announced).toEqual([pending.idempotencyKey]);
    // The other instance reads the same key for the same call (derived, not stored per process).
    expect((await pendingOf(other))[0]!.idempotencyKey).toBe(pending.idempotencyKey);

    await other.runtime.approve(operationId, pending.toolCallId);
    expect(await within(app.runtime.result(operationId), 'the approved operation completes', 20_000)).toMatchObject({ reason: 'done' });
    void done.catch(() => undefined);
    expect(localKeys.get(pending.toolCallId)).toBe(pending.idempotencyKey);
  }, 30_000);
});
