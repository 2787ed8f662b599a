/**
 * SPEC A3 (human approval), P2: a call that needs approval pauses the operation with `pendingTools`;
 * approve runs it through every hook, reject stops the run or (continue) publishes the reason as the result.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { bootRuntime, pointsOf, eventOf, rejectionOf, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { HUMAN_LOOP_CONFIG, HumanLoopTools, executions, untilOperation, waiting } from './human-loop-kit.js';
import { InterventionNotPendingError, RunCancelledError, UnknownInterventionError } from '../../../src/index.js';
import { until } from '../../support/eventually.js';

let app: RuntimeApp;

beforeEach(async () => {
  executions.write = 0;
  executions.now = 0;
  app = await bootRuntime({ observe: true, config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools] });
});
afterEach(() => app.close());

describe('human approval', () => {
  it('A3: beforeHumanIntervention → waiting with pendingTools → approve → the call runs → afterHumanIntervention → done', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'writer', prompt: 'write the report' });
    const paused = await untilOperation(app.store, operationId, waiting);
    expect(paused.status).toBe('waiting');
    expect(executions.write).toBe(0);
    const before = eventOf(app.events, operationId, 'beforeHumanIntervention');
    expect(before?.payload).toMatchObject({
      operationId,
      stepIndex: 0,
      pendingTools: [{ identifier: 'fs', apiName: 'write', args: { path: '/tmp/report.txt' }, kind: 'approval' }],
    });
    const [pending] = await app.store.interventions(operationId);
    expect(pending).toMatchObject({ status: 'pending', kind: 'approval' });

    await app.runtime.approve(operationId, pending!.toolCallId);
    const result = await within(done, 'done after approval');
    expect(result).toMatchObject({ reason: 'done', content: 'wrote: written /tmp/report.txt' });
    expect(executions.write).toBe(1);
    expect(pointsOf(app.events, operationId, ['beforeStep', 'beforeHumanIntervention', 'afterHumanIntervention', 'beforeToolCall', 'afterToolCall', 'afterStep', 'onComplete'])).toEqual([
      'beforeStep',
      'beforeHumanIntervention',
      'afterHumanIntervention',
      'beforeToolCall',
      'afterToolCall',
      'afterStep',
      'beforeStep',
      'afterStep',
      'onComplete',
    ]);
    expect(eventOf(app.events, operationId, 'afterHumanIntervention')?.payload).toMatchObject({ action: 'approve', toolCallId: pending!.toolCallId });
  });

  it('A3: approving twice or approving an unknown call is a clear error, never a second execution', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'writer', prompt: 'x' });
    await untilOperation(app.store, operationId, waiting);
    const [pending] = await app.store.interventions(operationId);
    await expect(app.runtime.approve(operationId, 'call_nope')).rejects.toBeInstanceOf(UnknownInterventionError);
    const both = await Promise.allSettled([app.runtime.approve(operationId, pending!.toolCallId), app.runtime.approve(operationId, pending!.toolCallId)]);
    expect(both.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const failed = both.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(failed.reason).toBeInstanceOf(InterventionNotPendingError);
    await within(done, 'done');
    await expect(app.runtime.approve(operationId, pending!.toolCallId)).rejects.toBeInstanceOf(InterventionNotPendingError);
    expect(executions.write).toBe(1);
  });

  it('A3: reject stops the run: onStopByHumanIntervention, a receipt without tool output, reason interrupted', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'writer', prompt: 'x' });
    await untilOperation(app.store, operationId, waiting);
    const [pending] = await app.store.interventions(operationId);
    await app.runtime.reject(operationId, pending!.toolCallId, { reason: 'not today' });
    const result = await within(done, 'done after reject');
    expect(result.reason).toBe('interrupted');
    expect(executions.write).toBe(0);
    expect(pointsOf(app.events, operationId, ['onStopByHumanIntervention', 'afterHumanIntervention', 'onComplete', 'on_run_error'])).toEqual([
      'onStopByHumanIntervention',
      'onComplete',
      'on_run_error',
    ]);
    expect(eventOf(app.events, operationId, 'onStopByHumanIntervention')?.payload).toMatchObject({ toolCallId: pending!.toolCallId, rejectionReason: 'not today' });
    const tool = (await app.store.messages(operationId)).find((m) => m.role === 'tool');
    expect(tool).toMatchObject({ toolCallId: pending!.toolCallId, content: 'not today', state: { humanIntervention: { action: 'reject', reason: 'not today' } } });
    expect(tool?.error).toBeUndefined();
  });

  it('A3: run() rejects with RunCancelledError when a human stops it', async () => {
    const running = app.runtime.run('x', { agentId: 'writer' });
    const operation = (await until(() => app.events.find((e) => e.point === 'beforeHumanIntervention')?.operationId, (id) => id !== undefined, 'the pause'))!;
    await untilOperation(app.store, operation, waiting);
    const [pending] = await app.store.interventions(operation);
    await app.runtime.reject(operation, pending!.toolCallId);
    expect(await rejectionOf(running)).toBeInstanceOf(RunCancelledError);
  });

  it('A3: reject with continue: the reason becomes the tool result and the run goes on (afterHumanIntervention)', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'writer', prompt: 'x' });
    await untilOperation(app.store, operationId, waiting);
    const [pending] = await app.store.interventions(operationId);
    await app.runtime.reject(operationId, pending!.toolCallId, { reason: 'use the draft folder', continue: true });
    const result = await within(done, 'done');
    expect(result).toMatchObject({ reason: 'done', content: 'wrote: use the draft folder' });
    expect(executions.write).toBe(0);
    expect(eventOf(app.events, operationId, 'afterHumanIntervention')?.payload).toMatchObject({
      action: 'rejectAndContinue',
      toolCallId: pending!.toolCallId,
      rejectionReason: 'use the draft folder',
    });
  });

  it('A3: calls before the one needing approval run first; every pending call of the step waits together', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'batch', prompt: 'x' });
    await untilOperation(app.store, operationId, waiting);
    expect(executions.now).toBe(1);
    const pending = await app.store.interventions(operationId);
    expect(pending.map((p) => p.args)).toEqual([{ path: '/a' }, { path: '/b' }]);
    await app.runtime.approve(operationId, pending[0]!.toolCallId);
    // One decision is not enough: the operation still waits for the other.
    expect((await app.store.getOperation(operationId))?.status).toBe('waiting');
    await app.runtime.reject(operationId, pending[1]!.toolCallId, { continue: true, reason: 'skip b' });
    const result = await within(done, 'done');
    expect(result).toMatchObject({ reason: 'done', content: 'done: skip b' });
    expect(executions.write).toBe(1);
    const tools = (await app.store.messages(operationId)).filter((m) => m.role === 'tool').map((m) => m.content);
    expect(tools).toEqual(['2026-11-30T12:00:00Z', 'written /a', 'skip b']);
  });

  it('A3: cancel of a waiting operation ends it at once with reason interrupted', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'writer', prompt: 'x' });
    await untilOperation(app.store, operationId, waiting);
    await app.runtime.cancel(operationId);
    expect((await within(done, 'done')).reason).toBe('interrupted');
    expect(pointsOf(app.events, operationId, ['onComplete'])).toEqual(['onComplete']);
  });
});
