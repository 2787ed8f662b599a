/**
 * SPEC A3 end to end: the exact order of every point one operation fires on the approval, deferred,
 * compaction and sub-agent paths (both families), on a real SQLite file.
 */
import { Injectable } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HookInvocation, OnHook, ToolResultContext } from '../../../src/index.js';
import { bootRuntime, pointsOf, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { HUMAN_LOOP_CONFIG, HumanLoopTools, untilOperation, waiting } from '../human-loop/human-loop-kit.js';

/** The model-call points (K1) around each model call are traced in model-call-hooks.spec.ts; this file traces the rest. */
const MODEL_CALL_POINTS = new Set(['before_model_request', 'beforeModelCall', 'onModelCallError', 'after_model_response', 'afterModelCall']);
const withoutModelCall = (points: readonly string[]) => points.filter((point) => !MODEL_CALL_POINTS.has(point));

/** One engine hook per tool point, so the trace shows both families. */
@Injectable()
class EngineHooks {
  @OnHook('before_tool_call') before() {}
  @OnHook('after_tool_call') after() {}
  @OnHook('transform_tool_result') transform(invocation: HookInvocation) {
    return invocation.payloadAs(ToolResultContext);
  }
}

let app: RuntimeApp;
beforeAll(async () => {
  app = await bootRuntime({ observe: true, config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools, EngineHooks] });
});
afterAll(() => app.close());

const TOOL_CHAIN = ['before_tool_call', 'beforeToolCall', 'transform_tool_result', 'afterToolCall', 'after_tool_call'];

describe('human-loop trace', () => {
  it('A3: approval — the pause inside the step, the decision, then the tool chain, afterStep, the next step', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'writer', prompt: 'x' });
    await untilOperation(app.store, operationId, waiting);
    const [pending] = await app.store.interventions(operationId);
    await app.runtime.approve(operationId, pending!.toolCallId);
    await within(done, 'done');
    expect(withoutModelCall(pointsOf(app.events, operationId))).toEqual([
      'on_run_start',
      'beforeStep',
      'beforeHumanIntervention',
      'afterHumanIntervention',
      ...TOOL_CHAIN,
      'afterStep',
      'beforeStep',
      'afterStep',
      'onComplete',
      'on_run_end',
    ]);
  });

  it('A3: deferred — the before-chain at hand-out, the after-chain at completion, then afterStep', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'browser', prompt: 'x' });
    await untilOperation(app.store, operationId, waiting);
    const [item] = await app.store.interventions(operationId);
    await app.runtime.completeDeferred(operationId, item!.toolCallId, { content: 'page', success: true });
    await within(done, 'done');
    expect(withoutModelCall(pointsOf(app.events, operationId))).toEqual([
      'on_run_start',
      'beforeStep',
      'before_tool_call',
      'beforeToolCall',
      'transform_tool_result',
      'afterToolCall',
      'after_tool_call',
      'afterStep',
      'beforeStep',
      'afterStep',
      'onComplete',
      'on_run_end',
    ]);
  });

  it('A3: compaction — between beforeStep and the model call, in every step above the threshold', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'compacting', prompt: 'Please keep track of the time for me. '.repeat(4) });
    await within(done, 'done');
    expect(withoutModelCall(pointsOf(app.events, operationId))).toEqual([
      'on_run_start',
      'beforeStep',
      'beforeCompact',
      'afterCompact',
      ...TOOL_CHAIN,
      'afterStep',
      'beforeStep',
      'beforeCompact',
      'afterCompact',
      ...TOOL_CHAIN,
      'afterStep',
      'beforeStep',
      'beforeCompact',
      'afterCompact',
      'afterStep',
      'onComplete',
      'on_run_end',
    ]);
  });

  it('A3, V1: sub-agent — CallAgent events inside the parent call, the after-chain when the child completes', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'manager', prompt: 'x' });
    await within(done, 'done');
    expect(withoutModelCall(pointsOf(app.events, operationId))).toEqual([
      'on_run_start',
      'beforeStep',
      'before_tool_call',
      'beforeToolCall',
      'beforeCallAgent',
      'afterCallAgent',
      'transform_tool_result',
      'afterToolCall',
      'after_tool_call',
      'afterStep',
      'beforeStep',
      'afterStep',
      'onComplete',
      'on_run_end',
    ]);
  });
});
