/**
 * Cancellation (DESIGN §6 `cancel`, W12, A4): `runtime.cancel(operationId)` reaches the tool that is running
 * (its signal aborts) and a control webhook that is being waited for (the request is dropped, the verdict is
 * a control error `cancelled` — cancellation never grants permission: a before-control's tool never runs,
 * an after-control's raw result is never published). Either way the operation ends `interrupted`, without
 * `onError`, and leaves no caller hooks in memory.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Injectable } from '@nestjs/common';
import type { AfterToolCallEvent } from '../../../src/index.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import type { LocalToolContext } from '../../../src/runtime/tools/local-tool.js';
import { bootRuntime, deferred, eventually, guardUnhandledRejections, pointsOf, TERMINAL_POINTS, within, type Deferred, type RuntimeApp } from './runtime-test-kit.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

const CONFIG = scriptedConfig({
  system: 'cancel-test',
  models: {
    patient: [toolCalls(call('wait/forever')), answer('never reached')],
    gated: [toolCalls(call('guarded/act')), answer('never reached')],
    audited: [toolCalls(call('audited/read')), answer('never reached')],
  },
  agents: {
    waiter: { model: 'patient', tools: ['wait/*'] },
    gated: { model: 'gated', tools: ['guarded/*'] },
    audited: { model: 'audited', tools: ['audited/*'] },
  },
});

const tool = {
  started: deferred(),
  signal: undefined as AbortSignal | undefined,
  abortReason: undefined as unknown,
  guardedRuns: 0,
  auditedRuns: 0,
};

@Injectable()
class CancelTools {
  @Tool({ identifier: 'wait', apiName: 'forever', description: 'waits for its signal', parameters: { type: 'object', properties: {} }, timeoutMs: 60_000 })
  async forever(_args: Record<string, unknown>, context: LocalToolContext): Promise<string> {
    tool.signal = context.signal;
    tool.started.resolve();
    await new Promise<void>((resolve) =>
      context.signal.addEventListener(
        'abort',
        () => {
          tool.abortReason = context.signal.reason;
          resolve();
        },
        { once: true },
      ),
    );
    return 'stopped';
  }

  @Tool({ identifier: 'guarded', apiName: 'act', description: 'must not run without permission', parameters: { type: 'object', properties: {} } })
  act(): string {
    tool.guardedRuns++;
    return 'acted';
  }

  @Tool({ identifier: 'audited', apiName: 'read', description: 'its output needs an after-control verdict', parameters: { type: 'object', properties: {} } })
  read(): string {
    tool.auditedRuns++;
    return 'raw-output-needing-review';
  }
}

guardUnhandledRejections();

let app: RuntimeApp;
let receiver: Server;
let base: string;
let arrived: Deferred<IncomingMessage>;
let requestClosed: boolean;

beforeAll(async () => {
  // A control receiver that never answers: the request stays open until the caller drops it.
  receiver = createServer((req) => {
    req.on('data', () => undefined);
    req.on('close', () => {
      requestClosed = true;
    });
    arrived.resolve(req);
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  app = await bootRuntime({ observe: true, config: CONFIG, providers: [CancelTools], webhooks: { allowNetworks: ['127.0.0.0/8'] } });
});

afterAll(async () => {
  await app?.close();
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
});

beforeEach(() => {
  Object.assign(tool, { started: deferred(), signal: undefined, abortReason: undefined, guardedRuns: 0, auditedRuns: 0 });
  arrived = deferred<IncomingMessage>();
  requestClosed = false;
});

describe('runtime.cancel(operationId)', () => {
  it('mid-tool: the tool signal aborts, the operation ends interrupted without onError, no further model call', async () => {
    const onError: unknown[] = [];
    const { operationId, done } = await app.runtime.execAgent({
      agentId: 'waiter',
      prompt: 'wait',
      hooks: [{ id: 'err', type: 'onError', handler: (event) => void onError.push(event) }],
    });
    await within(tool.started.promise, 'the tool to start');
    expect(tool.signal!.aborted).toBe(false);
    expect(app.registry.hasCallerHooks(operationId)).toBe(true);

    await app.runtime.cancel(operationId);
    const result = await within(done, 'done');
    expect(result).toMatchObject({ operationId, status: 'completed', reason: 'interrupted' });
    expect(tool.signal!.aborted).toBe(true);
    expect(tool.abortReason).toMatchObject({ code: 'cancelled' });
    expect(onError).toEqual([]);
    expect(pointsOf(app.events, operationId, TERMINAL_POINTS)).toEqual(['onComplete', 'on_run_error']);
    // The model was not asked again after the cancellation.
    const messages = await app.store.messages(operationId);
    expect(messages.filter((m) => m.role === 'assistant')).toHaveLength(1);
    expect(await app.store.getOperation(operationId)).toMatchObject({ status: 'completed', reason: 'interrupted' });
    // A4: nothing of the operation stays in memory.
    expect(app.registry.hasCallerHooks(operationId)).toBe(false);
    expect(app.registry.operationCount).toBe(0);
  });

  it('W12 mid-webhook: a pending beforeToolCall control is dropped; verdict control error "cancelled"; the tool never runs', async () => {
    const observedAfter: AfterToolCallEvent[] = [];
    const { operationId, done } = await app.runtime.execAgent({
      agentId: 'gated',
      prompt: 'act',
      hooks: [
        // onError 'continue' (the default): cancellation must still never grant permission.
        { id: 'slow-gate', type: 'beforeToolCall', webhook: { url: `${base}/gate`, responseHandling: 'toolCall', timeout: 60 } },
        { id: 'watch-after', type: 'afterToolCall', handler: (event) => void observedAfter.push(event) },
      ],
    });
    const request = await within(arrived.promise, 'the control request to arrive');
    expect(request.url).toBe('/gate');
    expect(requestClosed).toBe(false);

    await app.runtime.cancel(operationId);
    const result = await within(done, 'done');
    expect(result).toMatchObject({ operationId, status: 'completed', reason: 'interrupted' });
    expect(tool.guardedRuns).toBe(0);
    // The signal reached the HTTP request: the receiver sees its connection dropped.
    await eventually(() => requestClosed, 'the control request to be dropped');

    const gate = app.outcomes.filter((o) => o.operationId === operationId && o.hookId === 'slow-gate');
    expect(gate).toEqual([expect.objectContaining({ point: 'beforeToolCall', source: 'caller', outcome: 'error', errorCode: 'cancelled' })]);
    // The denial is what was published and what afterToolCall handlers observed; the tool's own steps are skipped.
    const published = (await app.store.messages(operationId)).find((m) => m.role === 'tool')!;
    expect(published).toMatchObject({
      content: 'hook_control_error',
      error: 'hook_control_error',
      state: { hookVerdict: { outcome: 'control_error', phase: 'beforeToolCall' } },
    });
    expect(observedAfter).toHaveLength(1);
    expect(observedAfter[0]!.result).toMatchObject({ success: false, content: 'hook_control_error' });
    const points = pointsOf(app.events, operationId);
    expect(points).not.toContain('after_tool_call');
    expect(points).not.toContain('transform_tool_result');
    expect(points).not.toContain('onError');
    expect(pointsOf(app.events, operationId, TERMINAL_POINTS)).toEqual(['onComplete', 'on_run_error']);
    expect(app.registry.operationCount).toBe(0);
  });

  it('W9/W12 mid-webhook after the tool: a pending afterToolCall control is dropped; the raw result is never published', async () => {
    const { operationId, done } = await app.runtime.execAgent({
      agentId: 'audited',
      prompt: 'read',
      // onError 'continue' (the default): a cancelled review must not let the unreviewed result through.
      hooks: [{ id: 'slow-review', type: 'afterToolCall', webhook: { url: `${base}/review`, responseHandling: 'toolCall', timeout: 60 } }],
    });
    const request = await within(arrived.promise, 'the control request to arrive');
    expect(request.url).toBe('/review');
    expect(tool.auditedRuns).toBe(1);

    await app.runtime.cancel(operationId);
    const result = await within(done, 'done');
    expect(result).toMatchObject({ operationId, status: 'completed', reason: 'interrupted' });
    await eventually(() => requestClosed, 'the control request to be dropped');

    const review = app.outcomes.filter((o) => o.operationId === operationId && o.hookId === 'slow-review');
    expect(review).toEqual([expect.objectContaining({ point: 'afterToolCall', source: 'caller', outcome: 'error', errorCode: 'cancelled' })]);
    const messages = await app.store.messages(operationId);
    expect(JSON.stringify(messages)).not.toContain('raw-output-needing-review');
    // What was published for the call is the sanitized control error, as after a blocking control error.
    expect(messages.filter((m) => m.role === 'tool')).toEqual([
      expect.objectContaining({ content: 'hook_control_error', error: 'hook_control_error', state: { hookVerdict: expect.objectContaining({ outcome: 'control_error', phase: 'afterToolCall' }) } }),
    ]);
    expect(pointsOf(app.events, operationId)).not.toContain('onError');
    expect(pointsOf(app.events, operationId, TERMINAL_POINTS)).toEqual(['onComplete', 'on_run_error']);
    expect(app.registry.operationCount).toBe(0);
  });
});
