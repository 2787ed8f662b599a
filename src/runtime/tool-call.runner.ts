/**
 * One tool call in the order of DESIGN §3, both families:
 * before_tool_call → beforeToolCall (mock, then before-controls) → execution → on_tool_error + onToolCallError
 * or the transform_tool_result chain → afterToolCall (after-controls see the transformed result) →
 * after_tool_call → the message to publish. Nothing is published here: the caller writes the returned
 * message once result control has finished (P1).
 */
import { Inject, Injectable } from '@nestjs/common';
import type { AfterToolCallEvent, ToolCallHookContext, ToolResult } from '../hooks/agent-events.js';
import type { RunContext, ToolRequestContext } from '../hooks/contexts.js';
import { errorType } from '../hooks/hook-errors.js';
import { HookDispatcher } from '../hooks/hook-dispatcher.js';
import type { HookPoint } from '../hooks/hook-points.js';
import type { EnvironmentHooks } from '../hooks/hook-ports.js';
import { agentEventBase } from './agent-event-base.js';
import { deniedToolResult, hookVerdictState, type DeniedVerdict } from '../hooks/tool-verdict.js';
import type { ModelToolCall } from './models/chat-model.js';
import type { NewMessage, ToolMessageError } from './runtime-store.port.js';
import { RuntimeShuttingDownError } from './runtime-errors.js';
import { buildToolCallHookContext, buildToolRequestContext, toolCallContext, toolResultContext } from './tools/tool-context.builder.js';
import { toolCallIdempotencyKey } from './tools/idempotency-key.js';
import { TOOL_CATALOG, ToolError, type ToolCatalog, type ToolDefinition } from './tools/tool-types.js';
import { runAttempts } from './tools/tool-attempts.js';
import { ToolCallScope } from './tools/tool-call-scope.js';
import { storableNamePart, TOOL_NOT_AVAILABLE, unavailableToolContent } from './tools/unavailable-tool.js';

/** F3: the error type of a call whose deadline passed (published state, `on_tool_error`, `onToolCallError`). */
const TIMEOUT = 'timeout';

interface ToolFailure {
  type: string;
  message: string;
  code?: string;
}

/** What a failed execution reports: a timeout by its type `timeout` (F3), other tool errors by their error's type. */
function failureOf(call: ModelToolCall, error: unknown): ToolFailure {
  if (!(error instanceof ToolError)) {
    const type = errorType(error);
    return { type, message: `${call.identifier}/${call.apiName} failed (${type})` };
  }
  return { type: error.code === 'timeout' ? TIMEOUT : error.errorType, message: error.message, code: error.code };
}

/** The points of one call's chain (both families): their timeline rows carry the call's key (F1). */
const TOOL_POINTS: readonly HookPoint[] = ['before_tool_call', 'beforeToolCall', 'transform_tool_result', 'afterToolCall', 'after_tool_call', 'on_tool_error', 'onToolCallError'];

/** The timeline's hook id for the runtime's own tool-access verdict (G1). */
export const RUNTIME_TOOL_ACCESS_HOOK_ID = 'runtime:tool-access';

export interface ToolCallInput {
  operationId: string;
  agentId: string;
  userId?: string;
  parentOperationId?: string;
  threadId?: string;
  stepIndex: number;
  callIndex: number;
  assistantMessageId: string;
  call: ModelToolCall;
  runContext: RunContext;
  signal: AbortSignal;
  /** The offered tool of this call (G1), found once by the step; a call without one never runs. */
  tool?: ToolDefinition;
  /** The step's read of the environment hooks (L1); without it (a deferred completion) each dispatch reads it. */
  environment?: EnvironmentHooks;
  /** F3: the agent's `timeoutMs`, for a tool (or MCP server) that sets no deadline of its own. */
  agentTimeoutMs?: number;
}

/** What one call needs through its chain, built once. */
interface Chain {
  input: ToolCallInput;
  request: ToolRequestContext;
  context: ToolCallHookContext;
  base: ReturnType<typeof agentEventBase>;
  dispatchOptions: { operationId: string; runContext: RunContext; signal: AbortSignal; environment?: EnvironmentHooks };
}

/** A deferred call the before-chain let through: it is handed to the outside executor, not run here. */
export interface HandedOut {
  handedOut: true;
}
const HANDED_OUT: HandedOut = { handedOut: true };

export interface ToolCallOutcome {
  message: NewMessage;
  success: boolean;
  error?: ToolMessageError;
  /** A before-hook mocked the call and the after-controls let its result through (a span's outcome, SPEC O1). */
  mocked?: true;
}

@Injectable()
export class ToolCallRunner {
  constructor(
    private readonly dispatcher: HookDispatcher,
    @Inject(TOOL_CATALOG) private readonly catalog: ToolCatalog,
    private readonly scope: ToolCallScope,
  ) {}

  /**
   * F1: runs `chain` as its call, so the timeline rows of its hooks record the call. Only when a tool point
   * has a hook for the operation: a call no hook observes writes no row, and pays nothing for the scope.
   */
  private asCall<T>(chain: Chain, work: () => Promise<T>): Promise<T> {
    const { dispatchOptions } = chain;
    if (!TOOL_POINTS.some((point) => this.dispatcher.isObserved(point, dispatchOptions))) return work();
    return this.scope.run(chain.input.operationId, chain.input.call.id, work);
  }

  /**
   * Runs the call through the whole chain. With `handOut` (a deferred call, DESIGN §8), a call the
   * before-chain allows and no handler mocked is not executed: `{ handedOut: true }` tells the caller to
   * leave its placeholder for the outside executor.
   */
  async run(input: ToolCallInput, options: { handOut: true }): Promise<ToolCallOutcome | HandedOut>;
  async run(input: ToolCallInput): Promise<ToolCallOutcome>;
  async run(input: ToolCallInput, options: { handOut?: boolean } = {}): Promise<ToolCallOutcome | HandedOut> {
    const chain = this.chainOf(input, input.tool);
    return this.asCall(chain, () => this.runChain(chain, options.handOut === true));
  }

  private async runChain(chain: Chain, handOut: boolean): Promise<ToolCallOutcome | HandedOut> {
    const { input, request, context, base, dispatchOptions } = chain;
    const { call, operationId, runContext, signal, tool } = input;

    // 1. engine family, observe only, no arguments (E2, E9)
    await this.dispatcher.dispatch('before_tool_call', request, dispatchOptions);

    // 2. agent family: mocks first, then the before-controls (M1, W8, W12)
    const gate = await this.dispatcher.gateToolCall({ ...base, ...context, type: 'beforeToolCall' }, dispatchOptions);
    if (gate.verdict.outcome !== 'allowed') {
      const denied = deniedToolResult(gate.verdict);
      // A call denied before it ran: handlers still observe the denial; after-controls are not asked (DESIGN §3).
      await this.dispatcher.dispatch('afterToolCall', { ...base, ...context, type: 'afterToolCall', result: denied, mocked: false }, dispatchOptions);
      return this.outcome(input, denied.content, gate.verdict);
    }
    if (handOut && gate.mock === null) {
      // The outside executor gets only calls its tool's schema accepts (a sub-agent call reports its own).
      if (tool && tool.source !== 'agent' && call.invalidArgs === undefined) {
        try {
          this.catalog.checkArguments(tool, call.args);
        } catch (error) {
          if (!(error instanceof ToolError)) throw error;
          await this.reportFailure(chain, 0, { type: error.errorType, message: error.message, code: error.code });
          return { message: this.toolMessage(input, `Error: ${error.message}`, false), success: false };
        }
      }
      return HANDED_OUT;
    }

    // 3. execution, unless mocked: each attempt under its deadline, retried where the tool allows it (F3)
    const started = performance.now();
    let result: ToolResult;
    let attempt = 1;
    const mocked = gate.mock !== null;
    try {
      if (gate.mock) result = gate.mock.result;
      else if (!tool) throw new ToolError('not_found', `unknown tool ${call.identifier}/${call.apiName}`);
      else if (call.invalidArgs !== undefined) throw new ToolError('invalid_arguments', `the arguments for ${call.identifier}/${call.apiName} are not valid JSON`);
      else {
        // F1: one key for every attempt of the call.
        const invocation = { operationId, toolCallId: call.id, idempotencyKey: toolCallIdempotencyKey(operationId, call.id), signal, runContext, ...(input.agentTimeoutMs !== undefined ? { agentTimeoutMs: input.agentTimeoutMs } : {}) };
        result = await runAttempts(
          (n) => {
            attempt = n;
            return this.catalog.execute(tool, call.args, invocation);
          },
          {
            toolName: `${call.identifier}/${call.apiName}`,
            signal,
            ...(tool.retry && tool.idempotent === true ? { retry: tool.retry } : {}),
            onRetry: (error, n) => this.reportFailure(chain, performance.now() - started, failureOf(call, error), { attempt: n, willRetry: true }),
          },
        );
      }
    } catch (error) {
      // G4: a call cut by shutdown has no result — its client is closing. Nothing is published; the step
      // is handed back, and the call runs again wherever the operation goes on.
      if (signal.aborted && signal.reason instanceof RuntimeShuttingDownError) throw signal.reason;
      // 4. the tool threw or timed out: the model sees an error result
      const failure = failureOf(call, error);
      await this.reportFailure(chain, performance.now() - started, failure, { attempt, willRetry: false });
      // F3: a deadline that passed is published as a tool error of type `timeout`.
      return { message: this.toolMessage(input, `Error: ${failure.message}`, false, failure.type === TIMEOUT ? { error: { type: TIMEOUT } } : undefined), success: false };
    }
    return this.afterExecution(chain, result, mocked, performance.now() - started);
  }

  /**
   * A call to a tool the agent was not offered (SPEC G1): nothing of the tool chain runs — no before-hook
   * can mock or allow it, it is never executed, held or handed out. `on_tool_error` and `onToolCallError`
   * report it with the type `tool_not_available`, the timeline shows the runtime's verdict, and the
   * returned error is published like any tool error: the run goes on.
   */
  async unavailable(input: ToolCallInput): Promise<ToolCallOutcome> {
    const identifier = storableNamePart(input.call.identifier);
    const apiName = storableNamePart(input.call.apiName);
    const named: ToolCallInput = { ...input, call: { ...input.call, identifier, apiName } };
    const chain = this.chainOf(named, undefined);
    const content = unavailableToolContent(identifier, apiName);
    this.dispatcher.recordRuntimeVerdict('beforeToolCall', input.operationId, RUNTIME_TOOL_ACCESS_HOOK_ID, 'denied', TOOL_NOT_AVAILABLE, input.call.id);
    await this.asCall(chain, () => this.reportFailure(chain, 0, { type: TOOL_NOT_AVAILABLE, message: content.slice('Error: '.length), code: TOOL_NOT_AVAILABLE }));
    return { message: this.toolMessage(named, content, false, { error: { type: TOOL_NOT_AVAILABLE } }), success: false };
  }

  /**
   * A deferred result arrives (`completeDeferred`, L4, P3, P4): the hooks that follow an execution run
   * now — the original caller hooks and the current environment hooks — and their verdict decides what
   * the caller publishes. A failed result is reported (`on_tool_error`, `onToolCallError`) and, unlike an
   * error of our own, still passes the after-controls: its content comes from outside and a control
   * decides whether the model may see it. `call` is undefined when the call cannot be reconstructed: a
   * configured after-control then fails closed.
   */
  async completeDeferred(input: ToolCallInput, result: ToolResult, reconstructed: boolean): Promise<ToolCallOutcome> {
    const tool = input.tool ?? (await this.catalog.find(input.call.identifier, input.call.apiName));
    const chain = this.chainOf(input, tool);
    return this.asCall(chain, () => this.completeChain(chain, result, reconstructed));
  }

  private async completeChain(chain: Chain, result: ToolResult, reconstructed: boolean): Promise<ToolCallOutcome> {
    const { input } = chain;
    if (!reconstructed && this.dispatcher.hasHooks('afterToolCall', input.operationId)) {
      const verdict: DeniedVerdict = { outcome: 'control_error', phase: 'afterToolCall', hookId: 'runtime', reason: 'hook_control_error', error: 'hook_control_error', errorCode: 'call_not_reconstructed' };
      return this.outcome(input, verdict.reason, verdict);
    }
    if (result.success === false) {
      await this.reportFailure(chain, 0, { type: 'DeferredToolError', message: 'the outside executor reported a failure' });
      const verdict = await this.dispatcher.gateToolResult({ ...chain.base, ...chain.context, type: 'afterToolCall', result, mocked: false }, chain.dispatchOptions);
      if (verdict.outcome !== 'allowed') return this.outcome(input, verdict.reason, verdict);
      return { message: this.toolMessage(input, result.content, false, result.state), success: false };
    }
    return this.afterExecution(chain, result, false, result.executionTime ?? 0);
  }

  /** Steps 5–7 of DESIGN §3 and the message to publish. */
  private async afterExecution(chain: Chain, executed: ToolResult, mocked: boolean, latencyMs: number): Promise<ToolCallOutcome> {
    const { input, request, context, base, dispatchOptions } = chain;
    let result = executed;
    // 5. the transform chain sees (and may reshape) the result text before anything else does
    if (result.success !== false) {
      const transformed = await this.dispatcher.transform('transform_tool_result', toolResultContext(request, result.content), dispatchOptions);
      if (transformed.result !== result.content) result = { ...result, content: transformed.result };
    }

    // 6. after-controls inspect exactly what would be published (W9)
    const after: AfterToolCallEvent = { ...base, ...context, type: 'afterToolCall', result, mocked };
    const verdict = await this.dispatcher.gateToolResult(after, dispatchOptions);

    // 7. engine family, observe only: safe metadata (E9)
    await this.dispatcher.dispatch('after_tool_call', toolCallContext(request, 'ok', latencyMs), dispatchOptions);

    if (verdict.outcome !== 'allowed') return this.outcome(input, verdict.reason, verdict);
    const success = result.success !== false;
    return { message: this.toolMessage(input, result.content, success, result.state), success, ...(mocked ? { mocked: true as const } : {}) };
  }

  /**
   * Step 4: the sanitized engine context, then the agent event — once per failed attempt (F3), `willRetry`
   * saying whether another follows; `attempt` counts from 1 and gives each attempt its own webhook-id.
   */
  private async reportFailure(chain: Chain, latencyMs: number, error: ToolFailure, at: { attempt: number; willRetry: boolean } = { attempt: 1, willRetry: false }): Promise<void> {
    const { request, context, dispatchOptions } = chain;
    // A fresh event id per attempt; the first attempt's event is the one a call without retries always had.
    const base = at.attempt > 1 ? agentEventBase(chain.input) : chain.base;
    await this.dispatcher.dispatch('on_tool_error', toolCallContext(request, 'error', latencyMs, error.type, at.willRetry), dispatchOptions);
    await this.dispatcher.dispatch('onToolCallError', { ...base, ...context, type: 'onToolCallError', error, willRetry: at.willRetry, attempt: at.attempt }, dispatchOptions);
  }

  private chainOf(input: ToolCallInput, tool: ToolDefinition | undefined): Chain {
    const { call, operationId, runContext, signal, environment } = input;
    return {
      input,
      request: buildToolRequestContext({ runId: runContext.runId, operationId, toolCallId: call.id, identifier: call.identifier, apiName: call.apiName, ...(tool ? { tool } : {}) }),
      context: this.toolContext(input, tool),
      base: agentEventBase(input),
      dispatchOptions: { operationId, runContext, signal, ...(environment ? { environment } : {}) },
    };
  }

  /** The shared tool context of all three tool events (T1–T3), built by the one builder. */
  private toolContext(input: ToolCallInput, tool: ToolDefinition | undefined): ToolCallHookContext {
    return buildToolCallHookContext({
      toolCallId: input.call.id,
      assistantMessageId: input.assistantMessageId,
      identifier: input.call.identifier,
      apiName: input.call.apiName,
      args: input.call.args,
      callIndex: input.callIndex,
      stepIndex: input.stepIndex,
      operationId: input.operationId,
      ...(tool ? { tool } : {}),
      runtime: {
        agentId: input.agentId,
        ...(input.userId ? { userId: input.userId } : {}),
        ...(input.parentOperationId ? { parentOperationId: input.parentOperationId } : {}),
        ...(input.threadId ? { threadId: input.threadId } : {}),
      },
    });
  }

  /** The message to publish, with its outcome stored beside it (`afterStep` reads it back, never guesses). */
  private toolMessage(input: ToolCallInput, content: string, success: boolean, state?: Record<string, unknown>): NewMessage {
    return {
      role: 'tool',
      content,
      success,
      toolCallId: input.call.id,
      identifier: input.call.identifier,
      apiName: input.call.apiName,
      ...(state ? { state } : {}),
    };
  }

  /** A hook's verdict on the message (DESIGN §7): kept apart from any state of the tool's own (P3). */
  private outcome(input: ToolCallInput, content: string, verdict: DeniedVerdict): ToolCallOutcome {
    return {
      message: {
        ...this.toolMessage(input, content, false),
        error: verdict.error,
        state: hookVerdictState(verdict),
      },
      success: false,
      error: verdict.error,
    };
  }
}
