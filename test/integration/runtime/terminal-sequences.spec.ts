/**
 * DESIGN §3 terminal rules (A3, E2, E6, S3) on a real SQLite file: every terminal reason fires its
 * sequence exactly once —
 *   done:                                   onComplete → on_run_end
 *   error:                        onError → onComplete → on_run_error
 *   interrupted, max_steps, cost_limit:     onComplete → on_run_error
 * — `run()` rejects with the original error (or a typed RunLimitError / RunCancelledError), `execAgent`'s
 * `done` resolves `{ status: 'completed', reason }` in every case, and a throwing `on_run_error` hook never
 * masks the original error.
 */
import { Injectable } from '@nestjs/common';
import {
  HookFailedError,
  HookInvocation,
  OnHook,
  RunEndContext,
  type AgentHook,
  type OnCompleteEvent,
  type OnErrorEvent,
} from '../../../src/index.js';
import { AGENT_DIRECTORY, type AgentDirectory } from '../../../src/runtime/agent-directory.port.js';
import { ModelError } from '../../../src/runtime/models/chat-model.js';
import { RunCancelledError, RunLimitError } from '../../../src/runtime/runtime-errors.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import type { LocalToolContext } from '../../../src/runtime/tools/local-tool.js';
import { bootRuntime, deferred, guardUnhandledRejections, pointsOf, rejectionOf, TERMINAL_POINTS, within, type RuntimeApp } from './runtime-test-kit.js';

const CONFIG = `
system: terminal-test
models:
  answer: { provider: scripted, costPerTokenUsd: 0, script: [ { content: "The answer is FORTY-TWO-ANSWER." } ] }
  # One attempt: the thrown error ends the run at once (K4 retries are tested in model-resilience.spec.ts).
  thrower: { provider: scripted, costPerTokenUsd: 0, retry: { attempts: 1 }, script: [ { content: "never played" } ] }
  looping:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: clock, apiName: now, args: {} } ]
      - toolCalls: [ { identifier: clock, apiName: now, args: {} } ]
      - toolCalls: [ { identifier: clock, apiName: now, args: {} } ]
  pricey:
    provider: scripted
    costPerTokenUsd: 0.01
    script:
      - toolCalls: [ { identifier: clock, apiName: now, args: {} } ]
      - toolCalls: [ { identifier: clock, apiName: now, args: {} } ]
      - content: "too late"
  patient:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: wait, apiName: forever, args: {} } ]
      - content: "never reached"
agents:
  answerer: { model: answer }
  thrower: { model: thrower }
  looper: { model: looping, tools: [ "clock/*" ], limits: { maxSteps: 2 } }
  spender: { model: pricey, tools: [ "clock/*" ], limits: { maxCostUsd: 0.01 } }
  waiter: { model: patient, tools: [ "wait/*" ] }
`;

/** Distinctive text that must never reach a log line (S3: types, not messages). */
const USER_TEXT = 'USER-SECRET-TEXT-7731';

const flags = { failRunStart: false, throwInRunError: false };
const seen = {
  runStartError: undefined as Error | undefined,
  runErrors: [] as Array<{ hook: string; runId: string | undefined; payload: unknown }>,
  runEnds: [] as RunEndContext[],
};
const started = { waiting: deferred() };

@Injectable()
class TerminalHooks {
  @OnHook('on_run_start')
  maybeFail(): void {
    if (!flags.failRunStart) return;
    seen.runStartError = new TypeError(`token rejected for ${USER_TEXT}`);
    throw seen.runStartError;
  }

  @OnHook('on_run_error')
  firstRunError(invocation: HookInvocation): void {
    seen.runErrors.push({ hook: 'first', runId: invocation.runContext?.runId, payload: invocation.payload });
    if (flags.throwInRunError) throw new RangeError('on_run_error hook is broken');
  }

  @OnHook('on_run_error', { failurePolicy: 'fail' })
  secondRunError(invocation: HookInvocation): void {
    seen.runErrors.push({ hook: 'second', runId: invocation.runContext?.runId, payload: invocation.payload });
  }

  @OnHook('on_run_end')
  runEnd(invocation: HookInvocation): void {
    seen.runEnds.push(invocation.payloadAs(RunEndContext));
  }
}

@Injectable()
class TerminalTools {
  @Tool({ identifier: 'clock', apiName: 'now', description: 'time', parameters: { type: 'object', properties: {} } })
  now(): string {
    return '2026-11-30T00:00:00Z';
  }

  @Tool({ identifier: 'wait', apiName: 'forever', description: 'waits for cancellation', parameters: { type: 'object', properties: {} } })
  async forever(_args: Record<string, unknown>, context: LocalToolContext): Promise<string> {
    started.waiting.resolve();
    await new Promise<void>((resolve) => context.signal.addEventListener('abort', () => resolve(), { once: true }));
    return 'stopped';
  }
}

/** Caller handlers for the agent-family terminal points: their payloads, in order. */
function terminalHandlers(log: Array<OnErrorEvent | OnCompleteEvent>): AgentHook[] {
  return [
    { id: 'on-error', type: 'onError', handler: (event) => void log.push(event) },
    { id: 'on-complete', type: 'onComplete', handler: (event) => void log.push(event) },
  ];
}

guardUnhandledRejections();

let app: RuntimeApp;

beforeAll(async () => {
  app = await bootRuntime({ observe: true, config: CONFIG, providers: [TerminalHooks, TerminalTools] });
});

afterAll(async () => {
  await app?.close();
});

beforeEach(() => {
  Object.assign(flags, { failRunStart: false, throwInRunError: false });
  seen.runStartError = undefined;
  seen.runErrors.length = 0;
  seen.runEnds.length = 0;
  started.waiting = deferred();
});

describe('DESIGN §3 terminal sequences, exactly once per operation (A3, E2)', () => {
  it('done: onComplete → on_run_end once; RunEndContext is a safe summary holding no answer text (E2)', async () => {
    const log: Array<OnErrorEvent | OnCompleteEvent> = [];
    const result = await app.runtime.run('What is the answer?', { agentId: 'answerer', hooks: terminalHandlers(log) });
    expect(result).toMatchObject({ status: 'completed', reason: 'done', content: 'The answer is FORTY-TWO-ANSWER.' });
    expect(pointsOf(app.events, result.operationId, TERMINAL_POINTS)).toEqual(['onComplete', 'on_run_end']);
    expect(log).toEqual([expect.objectContaining({ type: 'onComplete', reason: 'done', operationId: result.operationId })]);

    expect(seen.runErrors).toEqual([]);
    expect(seen.runEnds).toHaveLength(1);
    const end = seen.runEnds[0]!;
    expect(end).toBeInstanceOf(RunEndContext);
    expect(Object.keys(end).sort()).toEqual(['durationMs', 'runId', 'status', 'steps', 'toolCalls']);
    expect(end).toMatchObject({ runId: result.operationId, status: 'completed', steps: 1, toolCalls: 0 });
    expect(end.durationMs).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(end)).not.toContain('FORTY-TWO');
  });

  it('error (the model throws): onError → onComplete → on_run_error once; run() rejects with the very error object', async () => {
    const model = app.moduleRef.get<AgentDirectory>(AGENT_DIRECTORY).agent('thrower')!.model;
    const original = new ModelError('http_error', `model broke while reading ${USER_TEXT}`, 502);
    const complete = model.complete.bind(model);
    model.complete = async () => {
      throw original;
    };
    try {
      const log: Array<OnErrorEvent | OnCompleteEvent> = [];
      const error = await rejectionOf(app.runtime.run('hello', { agentId: 'thrower', hooks: terminalHandlers(log) }));
      expect(error).toBe(original);

      const operationId = (log[0] as OnErrorEvent).operationId;
      expect(pointsOf(app.events, operationId, TERMINAL_POINTS)).toEqual(['onError', 'onComplete', 'on_run_error']);
      expect(log).toEqual([
        expect.objectContaining({ type: 'onError', errorType: 'ModelError', errorCode: 'http_error', errorMessage: original.message }),
        expect.objectContaining({ type: 'onComplete', reason: 'error' }),
      ]);
      // on_run_error receives the raised error itself (DESIGN §6), once per hook.
      expect(seen.runErrors.map((r) => r.hook)).toEqual(['first', 'second']);
      for (const record of seen.runErrors) {
        expect(record.payload).toBe(original);
        expect(record.runId).toBe(operationId);
      }
      expect(seen.runEnds).toEqual([]);

      // execAgent's done resolves (never rejects) with the reason.
      const { operationId: second, done } = await app.runtime.execAgent({ agentId: 'thrower', prompt: 'again' });
      await expect(within(done, 'done')).resolves.toMatchObject({ operationId: second, status: 'completed', reason: 'error' });
      expect(pointsOf(app.events, second, TERMINAL_POINTS)).toEqual(['onError', 'onComplete', 'on_run_error']);
      expect(await app.store.getOperation(second)).toMatchObject({ status: 'completed', reason: 'error', errorType: 'ModelError' });
    } finally {
      model.complete = complete;
    }
  });

  it('E6 error (on_run_start fails under fail): no step runs; run() rejects with HookFailedError whose cause is the hook error', async () => {
    flags.failRunStart = true;
    const log: Array<OnErrorEvent | OnCompleteEvent> = [];
    const error = await rejectionOf(app.runtime.run('hello', { agentId: 'answerer', hooks: terminalHandlers(log) }));
    expect(error).toBeInstanceOf(HookFailedError);
    expect(error).toMatchObject({ point: 'on_run_start', hookId: 'TerminalHooks.maybeFail' });
    expect((error as HookFailedError).cause).toBe(seen.runStartError);

    const operationId = log[0]!.operationId;
    expect(pointsOf(app.events, operationId)).toEqual(['on_run_start', 'onError', 'onComplete', 'on_run_error']);
    expect(log.map((e) => e.type)).toEqual(['onError', 'onComplete']);
    expect(log[0]).toMatchObject({ errorType: 'HookFailedError', errorCode: 'hook_failed' });
    expect(seen.runErrors.map((r) => r.payload)).toEqual([error, error]);
    // The model was never asked: only the user's prompt is stored.
    expect((await app.store.messages(operationId)).map((m) => m.role)).toEqual(['user']);
  });

  it('E2/S3: a throwing on_run_error hook never masks the original error, later on_run_error hooks still run, and logs name types only', async () => {
    flags.failRunStart = true;
    flags.throwInRunError = true;
    const linesBefore = app.logLines.length;
    const error = await rejectionOf(app.runtime.run('hello', { agentId: 'answerer' }));
    expect(error).toBeInstanceOf(HookFailedError);
    expect((error as HookFailedError).cause).toBe(seen.runStartError);
    expect(seen.runErrors.map((r) => r.hook)).toEqual(['first', 'second']);
    expect(seen.runErrors[1]!.payload).toBe(error);

    const lines = app.logLines.slice(linesBefore);
    expect(lines.some((line) => line.includes('TerminalHooks.firstRunError') && line.includes('RangeError'))).toBe(true);
    expect(lines.join('\n')).not.toContain(USER_TEXT);
    expect(lines.join('\n')).not.toContain('on_run_error hook is broken');
  });

  it('interrupted (runtime.cancel): onComplete → on_run_error once, no onError; run() rejects with RunCancelledError', async () => {
    const log: Array<OnErrorEvent | OnCompleteEvent> = [];
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'waiter', prompt: 'wait', hooks: terminalHandlers(log) });
    await within(started.waiting.promise, 'the tool to start');
    await app.runtime.cancel(operationId);
    await expect(within(done, 'done')).resolves.toMatchObject({ operationId, status: 'completed', reason: 'interrupted' });
    expect(pointsOf(app.events, operationId, TERMINAL_POINTS)).toEqual(['onComplete', 'on_run_error']);
    expect(log).toEqual([expect.objectContaining({ type: 'onComplete', reason: 'interrupted' })]);
    expect(seen.runErrors.map((r) => r.payload)).toEqual([expect.any(RunCancelledError), expect.any(RunCancelledError)]);
    expect(seen.runEnds).toEqual([]);

    // run() of the same kind of operation rejects with the typed error.
    started.waiting = deferred();
    const running = rejectionOf(app.runtime.run('wait', { agentId: 'waiter' }));
    await within(started.waiting.promise, 'the tool to start');
    // run() does not return the operation id: the tool that just started belongs to the last step begun.
    const second = app.events.findLast((e) => e.point === 'beforeStep')!.operationId!;
    expect(second).not.toBe(operationId);
    await app.runtime.cancel(second);
    const cancelled = await within(running, 'run()');
    expect(cancelled).toBeInstanceOf(RunCancelledError);
    expect(cancelled).toMatchObject({ operationId: second });
    expect(pointsOf(app.events, second, TERMINAL_POINTS)).toEqual(['onComplete', 'on_run_error']);
  });

  it('cost_limit: the next step is refused once usage reaches maxCostUsd; onComplete → on_run_error once; RunLimitError', async () => {
    const log: Array<OnErrorEvent | OnCompleteEvent> = [];
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'spender', prompt: 'spend', hooks: terminalHandlers(log) });
    const result = await within(done, 'done');
    expect(result).toMatchObject({ status: 'completed', reason: 'cost_limit' });
    expect(result.usage.costUsd).toBeGreaterThanOrEqual(0.01);
    // One model call only: the second step was refused before the model was asked again.
    expect((await app.store.messages(operationId)).map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(pointsOf(app.events, operationId, TERMINAL_POINTS)).toEqual(['onComplete', 'on_run_error']);
    expect(log).toEqual([expect.objectContaining({ type: 'onComplete', reason: 'cost_limit' })]);
    expect(seen.runErrors[0]!.payload).toMatchObject({ name: 'RunLimitError', reason: 'cost_limit', operationId });

    const error = await rejectionOf(app.runtime.run('spend', { agentId: 'spender' }));
    expect(error).toBeInstanceOf(RunLimitError);
    expect(error).toMatchObject({ reason: 'cost_limit' });
  });

  it('max_steps: onComplete → on_run_error once, no onError; RunLimitError', async () => {
    const log: Array<OnErrorEvent | OnCompleteEvent> = [];
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'looper', prompt: 'loop', hooks: terminalHandlers(log) });
    await expect(within(done, 'done')).resolves.toMatchObject({ status: 'completed', reason: 'max_steps' });
    expect(pointsOf(app.events, operationId).filter((p) => p === 'beforeStep')).toHaveLength(2);
    expect(pointsOf(app.events, operationId, TERMINAL_POINTS)).toEqual(['onComplete', 'on_run_error']);
    expect(log).toEqual([expect.objectContaining({ type: 'onComplete', reason: 'max_steps' })]);
    expect(seen.runErrors[0]!.payload).toMatchObject({ name: 'RunLimitError', reason: 'max_steps' });

    const error = await rejectionOf(app.runtime.run('loop', { agentId: 'looper' }));
    expect(error).toBeInstanceOf(RunLimitError);
    expect(error).toMatchObject({ reason: 'max_steps' });
  });

  it('a second cancel or terminal attempt after the end fires nothing more (exactly once)', async () => {
    const result = await app.runtime.run('What is the answer?', { agentId: 'answerer' });
    await app.runtime.cancel(result.operationId);
    expect(pointsOf(app.events, result.operationId, TERMINAL_POINTS)).toEqual(['onComplete', 'on_run_end']);
    expect(await app.store.getOperation(result.operationId)).toMatchObject({ status: 'completed', reason: 'done' });
  });
});
