/**
 * SPEC F1 on both drivers: the timeline carries each tool call's idempotency key — on the rows of every tool
 * point of both families and on the runtime's own G1 verdict, never on other rows — in the library's
 * `timeline()` and in `GET /v1/operations/:id/timeline` of the HTTP API mounted in a host app (one mapping,
 * equal bodies). The engine-family tool contexts (`before_tool_call`, `transform_tool_result`,
 * `after_tool_call`, `on_tool_error`) carry the same key.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable, Module } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import {
  AgentHooksHttpModule,
  AgentHooksModule,
  AgentRuntime,
  OnHook,
  Tool,
  ToolCallContext,
  ToolRequestContext,
  ToolResultContext,
  type HookInvocation,
  type TimelineItemView,
} from '../../../src/index.js';
import { toolCallIdempotencyKey } from '../../../src/runtime/tools/idempotency-key.js';
import { appDatabases } from '../persistence/test-databases.js';
import { guardUnhandledRejections, within } from '../runtime/runtime-test-kit.js';

guardUnhandledRejections();

const OWNER = 'f1-timeline-owner';
const CONFIG = `
system: f1-timeline
models:
  keyed:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: ledger, apiName: record, args: { entry: "a" } }, { identifier: nowhere, apiName: missing, args: {} } ]
      - toolCalls: [ { identifier: ledger, apiName: fail, args: {} } ]
      - content: "kept"
agents:
  keeper: { model: keyed, tools: [ "ledger/*" ] }
`;

const TOOL_POINTS = new Set(['before_tool_call', 'beforeToolCall', 'transform_tool_result', 'afterToolCall', 'after_tool_call', 'on_tool_error', 'onToolCallError']);

/** What the engine-family tool hooks were handed: point, call id, key. */
const engineSeen: { point: string; toolCallId: string; key: string | undefined }[] = [];

@Injectable()
class Ledger {
  @Tool({ identifier: 'ledger', apiName: 'record', description: 'records an entry', parameters: { type: 'object', properties: { entry: { type: 'string' } } } })
  record(args: Record<string, unknown>): string {
    return `recorded ${String(args.entry)}`;
  }

  @Tool({ identifier: 'ledger', apiName: 'fail', description: 'always fails', parameters: { type: 'object', properties: {} } })
  fail(): string {
    throw new Error('ledger is closed');
  }
}

@Injectable()
class KeyWatch {
  private seen(point: string, context: ToolRequestContext): void {
    engineSeen.push({ point, toolCallId: context.toolCallId, key: context.idempotencyKey });
  }

  @OnHook('before_tool_call') before(invocation: HookInvocation): void {
    this.seen('before_tool_call', invocation.payloadAs(ToolRequestContext));
  }

  @OnHook('transform_tool_result') transform(invocation: HookInvocation): ToolResultContext {
    const context = invocation.payloadAs(ToolResultContext);
    this.seen('transform_tool_result', context);
    return context;
  }

  @OnHook('after_tool_call') after(invocation: HookInvocation): void {
    this.seen('after_tool_call', invocation.payloadAs(ToolCallContext));
  }

  @OnHook('on_tool_error') failed(invocation: HookInvocation): void {
    this.seen('on_tool_error', invocation.payloadAs(ToolCallContext));
  }

  @OnHook('beforeToolCall') agentBefore(): void {}
  @OnHook('afterToolCall') agentAfter(): void {}
  @OnHook('onToolCallError') agentFailed(): void {}
  @OnHook('beforeStep') step(): void {}
}

const { describeEach, databaseFor } = await appDatabases('f1-timeline');

describeEach('F1 the timeline carries the idempotency key (%s)', (driver) => {
  let dir: string;
  let app: NestExpressApplication;
  let base: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agent-hooks-f1-timeline-'));
    writeFileSync(join(dir, 'agents.yaml'), CONFIG);
    @Module({
      imports: [
        AgentHooksModule.forRoot({ isGlobal: true, database: databaseFor(driver, 'timeline'), configFile: join(dir, 'agents.yaml') }),
        AgentHooksHttpModule.register({ path: 'agents', owner: () => OWNER, console: false }),
      ],
      providers: [Ledger, KeyWatch],
    })
    class HostModule {}
    const moduleRef = await Test.createTestingModule({ imports: [HostModule] }).compile();
    app = moduleRef.createNestApplication<NestExpressApplication>({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("F1: the timeline's tool rows carry the call's idempotency key (library and HTTP alike); the engine tool contexts carry it too", async () => {
    engineSeen.length = 0;
    const runtime = app.get(AgentRuntime);
    const { operationId, done } = await runtime.execAgent({ agentId: 'keeper', prompt: 'keep', ownerId: OWNER });
    expect(await within(done, 'the keeper finishes', 20_000)).toMatchObject({ reason: 'done', content: 'kept' });

    // Each call's key, from its published tool message.
    const calls = (await runtime.messages(operationId)).filter((message) => message.role === 'tool');
    const keyOf = new Map(calls.map((message) => [`${message.identifier}/${message.apiName}`, toolCallIdempotencyKey(operationId, message.toolCallId!)]));
    expect([...keyOf.keys()].sort()).toEqual(['ledger/fail', 'ledger/record', 'nowhere/missing']);
    const byKey = new Map([...keyOf].map(([tool, key]) => [key, tool]));

    const items: TimelineItemView[] = await runtime.timeline(operationId);
    // Every row of a tool point carries a key of one of the calls; no other row carries one.
    for (const item of items) {
      if (TOOL_POINTS.has(item.point)) expect(byKey.has(item.idempotencyKey!)).toBe(true);
      else expect(item).not.toHaveProperty('idempotencyKey');
    }
    expect(items.some((item) => item.point === 'beforeStep')).toBe(true);
    const pointsOf = (tool: string) =>
      items
        .filter((item) => item.idempotencyKey === keyOf.get(tool))
        .map((item) => `${item.point}${item.source === 'runtime' ? ':runtime' : ''}`)
        .sort();
    expect(pointsOf('ledger/record')).toEqual(['afterToolCall', 'after_tool_call', 'beforeToolCall', 'before_tool_call', 'transform_tool_result'].sort());
    expect(pointsOf('ledger/fail')).toEqual(['beforeToolCall', 'before_tool_call', 'onToolCallError', 'on_tool_error'].sort());
    // G1: the runtime's own verdict on a call to a tool the agent was not offered carries that call's key.
    expect(pointsOf('nowhere/missing')).toEqual(['beforeToolCall:runtime', 'onToolCallError', 'on_tool_error'].sort());

    // HTTP: the mounted API answers the same items (one mapping).
    const reply = await fetch(`${base}/agents/v1/operations/${operationId}/timeline`);
    expect(reply.status).toBe(200);
    expect(await reply.json()).toEqual({ items });

    // The engine-family contexts: each tool point's context carries its call's key.
    const toolOfCall = new Map(calls.map((message) => [message.toolCallId!, `${message.identifier}/${message.apiName}`]));
    expect(new Set(engineSeen.map((seen) => seen.point))).toEqual(new Set(['before_tool_call', 'transform_tool_result', 'after_tool_call', 'on_tool_error']));
    for (const seen of engineSeen) expect(seen.key).toBe(keyOf.get(toolOfCall.get(seen.toolCallId)!));
  }, 60_000);
});
