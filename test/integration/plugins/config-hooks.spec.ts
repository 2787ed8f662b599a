/**
 * Issue 6 items 1 and 3 end to end (SPEC E4–E7, DESIGN §3, §8): real plugin files in a project folder — a
 * `.ts` plugin importing 'nest-agent-hooks' (the built package), a `.mjs` plugin, a `ref:` function and a
 * `ref:` Class.method — booted with AgentHooksModule.forRoot({ configFile }) and fired through
 * HookDispatcher.
 */
import { jest } from '@jest/globals';
import { Injectable, Logger } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  AgentHooksModule,
  HookDispatcher,
  HookFailedError,
  HookInvocation,
  OnHook,
  RunContext,
  RunEndContext,
  ToolCallContext,
  ToolRequestContext,
  ToolResultContext,
  type BeforeStepEvent,
  type BeforeToolCallObservationEvent,
  type HookErrorEvent,
  type HookOutcomeRecord,
} from '../../../src/index.js';
import { hasBrand } from '../../../src/hooks/context-brand.js';
import { ensureBuilt, pluginProject, type PluginProject } from './plugin-project.js';

const CONFIG = `system: plugin-test
hooks:
  on_engine_start:
    - { plugin: results, method: started }
  on_run_start:
    - { plugin: results, method: wrongType, failure_policy: warn }
  transform_tool_result:
    - { plugin: results, method: mark }
    - { ref: "plugins/hooks/refs:tagB" }
    - { ref: "plugins/hooks/refs:Tagger.tagC" }
  on_run_end:
    - { plugin: counter, method: tick }
    - { plugin: failing, method: boom, failure_policy: warn }
    - { plugin: counter_two, method: tick }
    - { plugin: counter, method: tick }
  after_tool_call:
    - { plugin: counter, method: tick, matcher: "^fs/" }
  before_tool_call:
    - { plugin: failing, method: boom }
  beforeStep:
    - { plugin: counter, method: tickEvent }
  beforeToolCall:
    - { ref: "plugins/hooks/refs:denyDelete", onError: block, matcher: "^fs/delete" }
`;

const PLUGINS_TOML = `[hooks.plugins]
results = "plugins/hooks/result-hooks:ResultHooks"
counter = "plugins/hooks/counter:Counter"
counter_two = "plugins/hooks/counter:Counter"
failing = "plugins/hooks/failing.mjs:Failing"
`;

/** TypeScript, loaded through jiti; its context classes come from the built package, not from src/. */
const RESULT_HOOKS_TS = `import { EngineContext, ToolResultContext, type HookInvocation } from 'nest-agent-hooks';

export class ResultHooks {
  private system: string = 'not started';
  private calls: number = 0;

  started(invocation: HookInvocation): void {
    this.system = invocation.payloadAs(EngineContext).systemName;
  }

  mark(invocation: HookInvocation): ToolResultContext {
    this.calls += 1;
    const context = invocation.payloadAs(ToolResultContext);
    // A new context from this module's own import of the package (the built copy).
    return new ToolResultContext({
      runId: context.runId,
      toolCallId: context.toolCallId,
      identifier: context.identifier,
      apiName: context.apiName,
      provider: context.provider,
      result: \`\${context.result}[ts \${invocation.plugin}.\${invocation.method} \${this.system} #\${this.calls}]\`,
    });
  }

  wrongType(invocation: HookInvocation): void {
    invocation.payloadAs(ToolResultContext);
  }
}
`;

const COUNTER_MJS = `export class Counter {
  constructor() {
    this.count = 0;
  }
  tick(invocation) {
    this.count += 1;
    invocation.metadata.log.push(\`\${invocation.point} \${invocation.plugin}.\${invocation.method} #\${this.count}\`);
  }
  tickEvent(event) {
    this.count += 1;
    event.log.push(\`\${event.type} #\${this.count}\`);
  }
}
`;

const REFS_MJS = `export function tagB(invocation) {
  const context = invocation.payload;
  return context.withResult(\`\${context.result}[B \${invocation.ref}]\`);
}

export class Tagger {
  constructor() {
    this.seen = 0;
  }
  tagC(invocation) {
    this.seen += 1;
    const context = invocation.payload;
    return context.withResult(\`\${context.result}[C #\${this.seen}]\`);
  }
}

export function denyDelete(event) {
  return { decision: 'deny', reason: \`no deleting with \${event.apiName}\` };
}
`;

const FAILING_MJS = `export class Failing {
  boom() {
    throw new RangeError('DISTINCTIVE detail that must not be logged');
  }
}
`;

@Injectable()
class DecoratorHooks {
  @OnHook('transform_tool_result')
  late(invocation: HookInvocation): ToolResultContext {
    const context = invocation.payloadAs(ToolResultContext);
    return context.withResult(`${context.result}[decorator]`);
  }

  /** An explicit negative order goes before the config entries (order is the one sort key). */
  @OnHook('transform_tool_result', { order: -1 })
  early(invocation: HookInvocation): ToolResultContext {
    const context = invocation.payloadAs(ToolResultContext);
    return context.withResult(`${context.result}[early decorator]`);
  }
}

const request = { runId: 'run-1', toolCallId: 'call-1', identifier: 'fs', apiName: 'readFile', provider: 'local' };

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

let project: PluginProject;
let moduleRef: TestingModule;
let dispatcher: HookDispatcher;
const outcomes: HookOutcomeRecord[] = [];
const errors: HookErrorEvent[] = [];

beforeAll(async () => {
  ensureBuilt();
  project = pluginProject({
    'config/agents.yaml': CONFIG,
    'plugins/plugins.toml': PLUGINS_TOML,
    'plugins/hooks/result-hooks.ts': RESULT_HOOKS_TS,
    'plugins/hooks/counter.mjs': COUNTER_MJS,
    'plugins/hooks/refs.mjs': REFS_MJS,
    'plugins/hooks/failing.mjs': FAILING_MJS,
  });
  moduleRef = await Test.createTestingModule({
    imports: [AgentHooksModule.forRoot({ configFile: project.configFile, database: 'sqlite::memory:' })],
    providers: [DecoratorHooks],
  }).compile();
  dispatcher = moduleRef.get(HookDispatcher);
  dispatcher.outcomes$.subscribe((record) => outcomes.push(record));
  dispatcher.errors$.subscribe((error) => errors.push(error));
  await moduleRef.init();
}, 180_000);

afterAll(async () => {
  await moduleRef?.close();
  project?.remove();
});

beforeEach(() => {
  outcomes.length = 0;
  errors.length = 0;
});

describe('config hooks from agents.yaml + plugins.toml, booted in AgentHooksModule', () => {
  it('DESIGN §3: YAML entries run in file order before decorators; on_engine_start ran first; instances live across runs', async () => {
    const input = new ToolResultContext({ ...request, result: 'x' });
    const first = await dispatcher.transform('transform_tool_result', input);
    expect(first.result).toBe('x[early decorator][ts results.mark plugin-test #1][B plugins/hooks/refs:tagB][C #1][decorator]');
    const second = await dispatcher.transform('transform_tool_result', new ToolResultContext({ ...request, result: 'y' }));
    expect(second.result).toBe('y[early decorator][ts results.mark plugin-test #2][B plugins/hooks/refs:tagB][C #2][decorator]');
  });

  it('E7: the .ts plugin imports nest-agent-hooks (the built copy); payloadAs works across copies by brand, both ways', async () => {
    const input = new ToolResultContext({ ...request, result: 'z' });
    const out = await dispatcher.transform('transform_tool_result', input);
    // The .ts plugin accepted a context built from src/ and answered with the dist class; every later hook
    // (the src decorator's payloadAs included) accepted that one. Same brand, different class objects.
    expect(out.result).toMatch(/^z\[early decorator\]\[ts results\.mark plugin-test #\d+\]/);
    expect(hasBrand(out, ToolResultContext.brand)).toBe(true);
    expect(out).not.toBeInstanceOf(ToolResultContext);
    expect(out.constructor.name).toBe('ToolResultContext');
    expect(new HookInvocation({ point: 'transform_tool_result', payload: out }).payloadAs(ToolResultContext)).toBe(out);

    // The wrong type: payloadAs throws TypeError inside the plugin, here under `warn`, so the run goes on.
    const run = new RunContext({ runId: 'run-2', userId: 'u1' });
    await expect(dispatcher.transform('on_run_start', run)).resolves.toBe(run);
    expect(errors).toEqual([expect.objectContaining({ point: 'on_run_start', hookId: 'results.wrongType', errorType: 'TypeError' })]);
  });

  it('E7: one instance per plugin id, shared across points and runs; two ids on one class are two instances', async () => {
    const log: string[] = [];
    const end = new RunEndContext({ runId: 'run-1', status: 'ok', durationMs: 5, steps: 1, toolCalls: 0 });
    await dispatcher.dispatch('on_run_end', end, { metadata: { log } });
    const step = { id: 's1', type: 'beforeStep', operationId: 'op-1', agentId: 'assistant', stepIndex: 0, timestamp: new Date().toISOString(), log } as BeforeStepEvent & { log: string[] };
    await dispatcher.dispatch('beforeStep', step);
    const call = new ToolCallContext({ ...request, status: 'ok', latencyMs: 3 });
    await dispatcher.dispatch('after_tool_call', call, { metadata: { log } });
    await dispatcher.dispatch('on_run_end', end, { metadata: { log } });
    expect(log).toEqual([
      'on_run_end counter.tick #1',
      'on_run_end counter_two.tick #1',
      'on_run_end counter.tick #2',
      'beforeStep #3',
      'after_tool_call counter.tick #4',
      'on_run_end counter.tick #5',
      'on_run_end counter_two.tick #2',
      'on_run_end counter.tick #6',
    ]);
  });

  it('E6: failure_policy warn logs the error type and goes on; fail rejects with HookFailedError naming the hook', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const log: string[] = [];
    let warnings: string[];
    try {
      await expect(dispatcher.dispatch('on_run_end', new RunEndContext({ runId: 'r', status: 'ok', durationMs: 1, steps: 1, toolCalls: 0 }), { metadata: { log } })).resolves.toBeUndefined();
      warnings = warn.mock.calls.map((call) => String(call[0]));
    } finally {
      warn.mockRestore();
    }
    expect(log).toHaveLength(3);
    expect(errors).toEqual([expect.objectContaining({ point: 'on_run_end', hookId: 'failing.boom', errorType: 'RangeError' })]);
    // S1/S3: the log names point, hook and error type; the plugin's error message never reaches it.
    expect(warnings).toEqual(['hook failing.boom at on_run_end failed (RangeError); continuing']);

    const failed = await dispatcher.dispatch('before_tool_call', new ToolRequestContext(request)).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(HookFailedError);
    expect(failed).toMatchObject({ point: 'before_tool_call', hookId: 'failing.boom' });
    expect((failed as Error).message).toBe('Hook "failing.boom" at before_tool_call failed: RangeError');
  });

  it('W5: a matcher on a tool point: after_tool_call only for fs/*, the beforeToolCall control only for fs/delete*', async () => {
    const log: string[] = [];
    await dispatcher.dispatch('after_tool_call', new ToolCallContext({ ...request, identifier: 'clock', apiName: 'now', status: 'ok', latencyMs: 1 }), { metadata: { log } });
    expect(log).toEqual([]);
    await dispatcher.dispatch('after_tool_call', new ToolCallContext({ ...request, status: 'ok', latencyMs: 1 }), { metadata: { log } });
    expect(log).toHaveLength(1);

    const denied = await dispatcher.gateToolCall(toolEvent('fs', 'deleteFile'));
    expect(denied.verdict).toMatchObject({ outcome: 'denied', hookId: 'plugins/hooks/refs:denyDelete', reason: 'no deleting with deleteFile', error: 'hook_denied' });
    const allowed = await dispatcher.gateToolCall(toolEvent('fs', 'readFile'));
    expect(allowed.verdict).toEqual({ outcome: 'allowed' });
  });

  it('the timeline says source "config", with the entry ids: plugin.method or the ref', async () => {
    await dispatcher.transform('transform_tool_result', new ToolResultContext({ ...request, result: 'x' }));
    expect(outcomes.map(({ hookId, source, outcome }) => ({ hookId, source, outcome }))).toEqual([
      { hookId: 'DecoratorHooks.early', source: 'decorator', outcome: 'ok' },
      { hookId: 'results.mark', source: 'config', outcome: 'ok' },
      { hookId: 'plugins/hooks/refs:tagB', source: 'config', outcome: 'ok' },
      { hookId: 'plugins/hooks/refs:Tagger.tagC', source: 'config', outcome: 'ok' },
      { hookId: 'DecoratorHooks.late', source: 'decorator', outcome: 'ok' },
    ]);
  });
});
