/**
 * DESIGN §3 end to end on a real SQLite file: one scripted run per case, every hook point the runtime fires
 * recorded in order, plus what was published.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  AgentHooksModule,
  HookInvocation,
  HOOK_POINT_NAMES,
  HookDispatcher,
  OnHook,
  ToolResultContext,
  type AfterToolCallEvent,
  type BeforeToolCallEvent,
  type HookOutcomeRecord,
  type HookPoint,
} from '../../../src/index.js';
import { AgentRuntime } from '../../../src/runtime/agent-runtime.js';
import { RUNTIME_STORE, type RuntimeStore } from '../../../src/runtime/runtime-store.port.js';
import { RunLimitError } from '../../../src/runtime/runtime-errors.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

const CONFIG = scriptedConfig({
  system: 'trace-test',
  models: {
    plain: [toolCalls(call('clock/now')), answer('It is {{lastToolResult}}.')],
    looping: [toolCalls(call('clock/now')), toolCalls(call('clock/now')), toolCalls(call('clock/now'))],
    failing: [toolCalls(call('broken/explode')), answer('recovered')],
    secret: [toolCalls(call('vault/read', { key: '{{prompt}}' })), answer('done: {{lastToolResult}}')],
    gated: [toolCalls(call('gate/check')), answer('{{lastToolResult}}')],
  },
  agents: {
    assistant: { model: 'plain', tools: ['clock/*'] },
    looper: { model: 'looping', tools: ['clock/*'], limits: { maxSteps: 2 } },
    breaker: { model: 'failing', tools: ['broken/*'] },
    vault: { model: 'secret', tools: ['vault/*'] },
    gatekeeper: { model: 'gated', tools: ['gate/*'] },
  },
});

const trace: string[] = [];
const policy = { denyBefore: false, denyAfter: false, mockClock: false };

@Injectable()
class TraceHooks {
  @OnHook('beforeToolCall', { order: -1 })
  mockIfAsked(event: BeforeToolCallEvent) {
    if (policy.mockClock && event.identifier === 'clock') event.mock({ content: 'MOCKED-TIME', success: true });
  }

  @OnHook('beforeToolCall', { onError: 'block' })
  beforePolicy() {
    return policy.denyBefore ? { decision: 'deny', reason: 'before says no' } : undefined;
  }

  @OnHook('afterToolCall', { onError: 'block' })
  afterPolicy(event: AfterToolCallEvent) {
    trace.push(`afterPolicy saw ${event.result.content}`);
    return policy.denyAfter ? { decision: 'deny', reason: 'after says no' } : undefined;
  }

  @OnHook('transform_tool_result')
  redact(invocation: HookInvocation) {
    const result = invocation.payloadAs(ToolResultContext);
    return result.withResult(result.result.replace(/s3cret/g, '[redacted]'));
  }
}

@Injectable()
class TraceTools {
  @Tool({ identifier: 'clock', apiName: 'now', description: 'time', parameters: { type: 'object', properties: {} } })
  now() {
    trace.push('tool clock/now ran');
    return '2026-11-30T00:00:00Z';
  }

  @Tool({ identifier: 'broken', apiName: 'explode', description: 'fails', parameters: { type: 'object', properties: {} } })
  explode(): string {
    trace.push('tool broken/explode ran');
    throw new RangeError('kaboom');
  }

  @Tool({ identifier: 'gate', apiName: 'check', description: 'reports its own blocked state', parameters: { type: 'object', properties: {} } })
  check() {
    return { content: 'not allowed by the tool itself', success: true, state: { type: 'blocked' } };
  }

  @Tool({ identifier: 'vault', apiName: 'read', description: 'reads', parameters: { type: 'object', properties: { key: { type: 'string' } } } })
  read(args: Record<string, unknown>) {
    return `value of ${String(args.key)} is s3cret`;
  }
}

let dir: string;
let moduleRef: TestingModule;
let runtime: AgentRuntime;
let store: RuntimeStore;
let outcomes: HookOutcomeRecord[];
const afterEvents: AfterToolCallEvent[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agent-hooks-trace-'));
  writeFileSync(join(dir, 'agents.yaml'), CONFIG);
  moduleRef = await Test.createTestingModule({
    imports: [AgentHooksModule.forRoot({ database: `sqlite:${join(dir, 'db.sqlite')}`, configFile: join(dir, 'agents.yaml') })],
    providers: [TraceHooks, TraceTools],
  }).compile();
  await moduleRef.init();
  runtime = moduleRef.get(AgentRuntime);
  store = moduleRef.get(RUNTIME_STORE);
  const dispatcher = moduleRef.get(HookDispatcher);
  // Every point, as the dispatcher announces it (observers see events in dispatch order).
  dispatcher.subscribe(({ point, payload }) => {
    trace.push(point);
    if (point === 'afterToolCall') afterEvents.push(payload as AfterToolCallEvent);
  });
  dispatcher.outcomes$.subscribe((record) => outcomes.push(record));
});

afterAll(async () => {
  await moduleRef.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  trace.length = 0;
  afterEvents.length = 0;
  outcomes = [];
  Object.assign(policy, { denyBefore: false, denyAfter: false, mockClock: false });
});

/** K1: around every model call, as announced to a subscriber (which observes every point). */
const MODEL_CALL = ['before_model_request', 'beforeModelCall', 'after_model_response', 'afterModelCall'];
const TOOL_CALL = ['before_tool_call', 'beforeToolCall', 'tool clock/now ran', 'transform_tool_result', 'afterToolCall', 'afterPolicy saw 2026-11-30T00:00:00Z', 'after_tool_call'];

describe('DESIGN §3 order (A3, E2)', () => {
  it('a plain call (K1: model-call points around each step\'s model call): run start, steps, tool-call order, terminal done sequence', async () => {
    const result = await runtime.run('What time is it?', { agentId: 'assistant' });
    expect(result).toMatchObject({ status: 'completed', reason: 'done', content: 'It is 2026-11-30T00:00:00Z.' });
    expect(trace.filter((t) => HOOK_POINT_NAMES.includes(t as HookPoint) || t.startsWith('tool') || t.startsWith('afterPolicy'))).toEqual([
      'on_run_start',
      'beforeStep',
      ...MODEL_CALL,
      ...TOOL_CALL,
      'afterStep',
      'beforeStep',
      ...MODEL_CALL,
      'afterStep',
      'onComplete',
      'on_run_end',
    ]);
    const messages = await store.messages(result.operationId);
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'What time is it?'],
      ['assistant', ''],
      ['tool', '2026-11-30T00:00:00Z'],
      ['assistant', 'It is 2026-11-30T00:00:00Z.'],
    ]);
  });

  it('M1: a mocked call is not executed, still passes the controls, and counts as a success', async () => {
    policy.mockClock = true;
    const result = await runtime.run('time?', { agentId: 'assistant' });
    expect(trace).not.toContain('tool clock/now ran');
    expect(trace).toContain('afterPolicy saw MOCKED-TIME');
    expect(result.content).toBe('It is MOCKED-TIME.');
  });

  it('W8: a before-denied call is not executed; handlers observe the denial; the denial is published with its verdict', async () => {
    policy.denyBefore = true;
    const result = await runtime.run('time?', { agentId: 'assistant' });
    expect(trace).not.toContain('tool clock/now ran');
    expect(trace).not.toContain('transform_tool_result');
    expect(trace).not.toContain('after_tool_call');
    const tool = (await store.messages(result.operationId)).find((m) => m.role === 'tool')!;
    expect(tool).toMatchObject({ content: 'before says no', error: 'hook_denied', state: { hookVerdict: { outcome: 'denied', phase: 'beforeToolCall', reason: 'before says no' } } });
    expect(result.content).toBe('It is before says no.');
  });

  it('W9/P1: an after-denied result is replaced before it is published or seen by the model', async () => {
    policy.denyAfter = true;
    const result = await runtime.run('time?', { agentId: 'assistant' });
    expect(trace).toContain('tool clock/now ran');
    expect(trace).toContain('after_tool_call');
    const messages = await store.messages(result.operationId);
    expect(messages.some((m) => m.content.includes('2026-11-30'))).toBe(false);
    expect(messages.find((m) => m.role === 'tool')).toMatchObject({ content: 'after says no', error: 'hook_denied' });
    expect(result.content).toBe('It is after says no.');
  });

  it('E2: transform_tool_result reshapes the result before after-controls, publishing and the model', async () => {
    const result = await runtime.run('api-key', { agentId: 'vault' });
    const tool = (await store.messages(result.operationId)).find((m) => m.role === 'tool')!;
    expect(tool.content).toBe('value of api-key is [redacted]');
    expect(trace).toContain('afterPolicy saw value of api-key is [redacted]');
    expect(result.content).toBe('done: value of api-key is [redacted]');
  });

  it('a failing tool: on_tool_error then onToolCallError; the model sees an error result and the run goes on', async () => {
    const result = await runtime.run('break it', { agentId: 'breaker' });
    const failing = trace.slice(trace.indexOf('tool broken/explode ran'));
    expect(failing.slice(0, 3)).toEqual(['tool broken/explode ran', 'on_tool_error', 'onToolCallError']);
    expect(trace).not.toContain('afterToolCall');
    const tool = (await store.messages(result.operationId)).find((m) => m.role === 'tool')!;
    expect(tool.content).toMatch(/^Error: /);
    expect(result).toMatchObject({ reason: 'done', content: 'recovered' });
  });

  it('max_steps: onComplete then on_run_error; run() rejects with RunLimitError; done resolves completed', async () => {
    const { done } = await runtime.execAgent({ agentId: 'looper', prompt: 'loop' });
    const result = await done;
    expect(result).toMatchObject({ status: 'completed', reason: 'max_steps' });
    expect(trace.slice(-2)).toEqual(['onComplete', 'on_run_error']);
    expect(trace).not.toContain('onError');
    await expect(runtime.run('loop', { agentId: 'looper' })).rejects.toBeInstanceOf(RunLimitError);
  });

  it('outcome records reach the timeline for the operation (persisted in batches)', async () => {
    const result = await runtime.run('time?', { agentId: 'assistant' });
    expect(outcomes.filter((o) => o.operationId === result.operationId).map((o) => o.hookId)).toEqual(
      expect.arrayContaining(['TraceHooks.mockIfAsked', 'TraceHooks.beforePolicy', 'TraceHooks.afterPolicy', 'TraceHooks.redact']),
    );
  });

  it('T4: afterToolCall.result is { content, success, executionTime? } and mocked marks a local mock', async () => {
    await runtime.run('time?', { agentId: 'assistant' });
    policy.mockClock = true;
    await runtime.run('time?', { agentId: 'assistant' });
    const [real, mocked] = afterEvents;
    expect(real).toMatchObject({ mocked: false, result: { content: '2026-11-30T00:00:00Z', success: true } });
    expect(typeof real!.result.executionTime).toBe('number');
    expect(mocked).toMatchObject({ mocked: true, result: { content: 'MOCKED-TIME', success: true } });
  });

  it("P3: a tool's own state.type 'blocked' is the tool's state, not a hook verdict", async () => {
    const result = await runtime.run('check', { agentId: 'gatekeeper' });
    const tool = (await store.messages(result.operationId)).find((m) => m.role === 'tool')!;
    expect(tool.state).toEqual({ type: 'blocked' });
    expect(tool.error).toBeUndefined();
    expect(tool.content).toBe('not allowed by the tool itself');
    expect(result.content).toBe('not allowed by the tool itself');
  });
});
