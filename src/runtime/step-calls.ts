/**
 * The tool calls of one step, each by its route (DESIGN §3, §8): a call the agent was not offered is
 * refused (G1); an approval call waits for its decision, stops or continues on a rejection, or is claimed
 * so it runs once; the built-in `agents/call` starts a child; a deferred call is handed to an outside
 * executor; any other call runs here. Whatever a call publishes is committed before the next call begins
 * (P1). The `StepExecutor` runs the calls in `callIndex` order; this file decides what one call does.
 */
import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { PendingTool } from '../hooks/agent-events.js';
import { errorType } from '../hooks/hook-errors.js';
import { HookDispatcher } from '../hooks/hook-dispatcher.js';
import { agentEventBase } from './agent-event-base.js';
import { CallRouter, type CallRoute } from './call-router.js';
import { rejectionReceipt, unknownOutcomeReceipt } from './intervention-receipts.js';
import type { ModelToolCall } from './models/chat-model.js';
import { RUNTIME_STORE, type NewMessage, type RuntimeStore, type StoredIntervention, type StoredMessage } from './runtime-store.port.js';
import { withApprovedArgs } from './approval-edits.js';
import { callLimitReached } from './budgets.js';
import { reasonOf } from './run-limits.js';
import { RuntimeShuttingDownError } from './runtime-errors.js';
import { WAITING, type StepContext, type StepResult } from './step-context.js';
import { ToolCallRunner, type ToolCallInput } from './tool-call.runner.js';
import { isAgentCall } from './tools/agent-call.tool.js';
import { toolCallIdempotencyKey } from './tools/idempotency-key.js';
import { ToolError, type ToolDefinition } from './tools/tool-types.js';
import { AgentTracer, type SpanAttributes, type TraceSpan } from '../tracing/agent-tracer.js';
import { GEN_AI, OURS } from '../tracing/gen-ai-attributes.js';
import { SHOWN_TOOL_NAME_LENGTH, TOOL_NOT_AVAILABLE } from './tools/unavailable-tool.js';

/** A call's route in this step: the router's, or `unavailable` for a tool the agent was not offered (G1). */
type StepRoute = CallRoute | 'unavailable';

/** The step's calls as the step found them: each one's offered tool and route, and what is known of them. */
export interface CallPlan {
  /** The step's assistant message, whose tool calls these are. */
  readonly assistant: StoredMessage;
  readonly calls: readonly ModelToolCall[];
  readonly routes: readonly StepRoute[];
  readonly tools: readonly (ToolDefinition | undefined)[];
  /** Which calls are the built-in `agents/call`. */
  readonly agentCalls: readonly boolean[];
  /** Calls whose result was published before a restart or a pause: not run again. */
  readonly published: ReadonlySet<string | undefined>;
  /** The operation's approvals and deferred placeholders, by tool call id (read only when a call may have one). */
  readonly interventions: ReadonlyMap<string, StoredIntervention>;
  /**
   * No call has an approval, a deferred result or a child: every result is published by this step's own
   * commits (appended to `step.messages`) or was before it began — `afterStep` needs no read-back.
   */
  readonly resultsHere: boolean;
}

/**
 * What one call left: `done` — its result is published (now, or before by a decision or a completion);
 * `awaiting` — a deferred result or a child's answer is still out; `end` — the step ends here, with `result`.
 */
export type CallOutcome = 'done' | 'awaiting' | { end: StepResult };

@Injectable()
export class StepCalls {
  /** Who claims approved calls from this process: one executor per call (never a second execution). */
  private readonly claimant = `${process.pid}:${randomUUID()}`;

  constructor(
    private readonly dispatcher: HookDispatcher,
    private readonly tools: ToolCallRunner,
    private readonly router: CallRouter,
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
    private readonly tracer: AgentTracer,
  ) {}

  /**
   * Each call's offered tool and route. A call the offer does not know is `unavailable` (G1): the agent's
   * `approval` / `deferred` rules never see it. Otherwise the tool decides too (`requiresApproval`,
   * `deferred`, client tools, the built-in sub-agent tool), not only the agent's rules.
   */
  async plan(step: StepContext, assistant: StoredMessage): Promise<CallPlan> {
    const calls = assistant.toolCalls ?? [];
    const published = new Set(step.messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId));
    const tools = calls.map((call) => step.offer.get(call.identifier, call.apiName));
    const routes = calls.map((call, i): StepRoute => (tools[i] ? this.router.route(step.agent, tools[i], call) : 'unavailable'));
    const agentCalls = tools.map((tool) => isAgentCall(tool));
    const resultsHere = !routes.some((r) => r === 'approval' || r === 'deferred') && !agentCalls.some(Boolean);
    const interventions = resultsHere ? NO_INTERVENTIONS : byToolCall(await this.store.interventions(step.operationId));
    return { assistant, calls, routes, tools, agentCalls, published, interventions, resultsHere };
  }

  /**
   * Runs call `callIndex` of the step by its route (DESIGN §3, steps 1–8 for the calls that execute), as an
   * `execute_tool <identifier/apiName>` span (SPEC O1) whose outcome is what the call published.
   */
  run(step: StepContext, plan: CallPlan, callIndex: number): Promise<CallOutcome> {
    const call = plan.calls[callIndex]!;
    // A model may emit any name (G1): the span carries a bounded one, as the published error does.
    const name = `${call.identifier}/${call.apiName}`.slice(0, SHOWN_TOOL_NAME_LENGTH);
    // Built only when a span is started (an SDK is registered).
    const attributes = (): SpanAttributes => {
      const built: SpanAttributes = {
        [GEN_AI.operationName]: 'execute_tool',
        [GEN_AI.toolName]: name,
        [GEN_AI.toolCallId]: call.id,
        [OURS.toolIdempotencyKey]: toolCallIdempotencyKey(step.operationId, call.id),
        [GEN_AI.toolType]: plan.tools[callIndex]?.source === 'mcp' ? 'extension' : 'function',
        [OURS.operationId]: step.operationId,
      };
      if (this.tracer.captureContent) built[GEN_AI.toolCallArguments] = JSON.stringify(call.args);
      return built;
    };
    return this.tracer.span(`execute_tool ${name}`, 'internal', attributes, (span) => this.route(step, plan, callIndex, span));
  }

  /** The call by its route; `span` is its `execute_tool` span, which gets the outcome (or `pending`). */
  private async route(step: StepContext, plan: CallPlan, callIndex: number, span: TraceSpan): Promise<CallOutcome> {
    const input = toolCallInput(step, plan, callIndex);
    const route = plan.routes[callIndex]!;
    if (route === 'unavailable') return this.publish(step, span, (await this.tools.unavailable(input)).message);
    const item = plan.interventions.get(input.call.id);
    input.call = withApprovedArgs(input.call, item); // F6: a human's edited arguments are the call's from here on
    // F4/F5: a call over a budget never runs — no approval asked, no hook, no execution; the operation ends.
    const limit = mayStillStart(item) ? callLimitReached({ limits: step.agent.limits, offer: step.offer, messages: step.messages, assistantId: plan.assistant.id, callIndex, call: input.call }) : undefined;
    if (limit) {
      if (span.recording) span.set({ [OURS.toolOutcome]: reasonOf(limit) });
      return { end: { terminal: reasonOf(limit), limit } };
    }
    if (route === 'approval') {
      const decided = await this.decided(step, plan, callIndex, item, span);
      if (decided !== 'approved') return pendingOn(span, decided);
    }
    if (plan.agentCalls[callIndex]) return pendingOn(span, await this.agentCall(step, input, item, span));
    if (route === 'deferred') return pendingOn(span, await this.deferredCall(step, input, item, span));
    return this.runHere(step, input, span);
  }

  /**
   * An approval call before it may run: no decision yet — the step pauses (or runs again when everything
   * was decided meanwhile); rejected — the operation stops, or the rejection receipt is its result;
   * approved — claimed for this executor, or, claimed before (a crash mid-execution), an unknown-outcome
   * receipt: never run blindly a second time — unless the tool is idempotent (F2): then it runs again.
   */
  private async decided(step: StepContext, plan: CallPlan, callIndex: number, item: StoredIntervention | undefined, span: TraceSpan): Promise<'approved' | CallOutcome> {
    const call = plan.calls[callIndex]!;
    if (!item || item.status === 'pending') {
      const paused = await this.awaitApproval(step, plan, callIndex);
      return { end: paused ? WAITING : undefined }; // decided meanwhile: run the step again
    }
    if (item.status === 'rejected') {
      if (item.decision !== 'rejectAndContinue') return { end: { terminal: 'interrupted' } };
      // A rejection receipt holds no tool output: published directly (P2).
      return this.publish(step, span, rejectionReceipt(call, item.decisionReason));
    }
    if (await this.store.claim(step.operationId, call.id, this.claimant)) return 'approved';
    // F2: claimed before by an executor that never published. An idempotent tool runs again, with the
    // call's key (F1) for its system to deduplicate on; any other gets the unknown-outcome receipt (G2).
    if (plan.tools[callIndex]?.idempotent === true) return 'approved';
    return this.publish(step, span, unknownOutcomeReceipt(call));
  }

  /**
   * Records the approvals this step needs — this call and every later one of the step that needs one —,
   * tells `beforeHumanIntervention` about them (once: a retried step finds them recorded), and pauses.
   * False when nothing is pending any more (decided while this step was getting here).
   */
  private async awaitApproval(step: StepContext, { calls, routes, published, interventions }: CallPlan, from: number): Promise<boolean> {
    const pending = calls
      .map((call, callIndex) => ({ call, callIndex }))
      .filter(({ call, callIndex }) => callIndex >= from && routes[callIndex] === 'approval' && !published.has(call.id))
      .filter(({ call }) => (interventions.get(call.id)?.status ?? 'pending') === 'pending');
    const pendingTools: PendingTool[] = pending.map(({ call }) => ({
      toolCallId: call.id,
      idempotencyKey: toolCallIdempotencyKey(step.operationId, call.id),
      identifier: call.identifier,
      apiName: call.apiName,
      args: call.args,
      kind: 'approval',
    }));
    if (pending.some(({ call }) => !interventions.has(call.id))) {
      const stepIndex = step.operation.stepIndex;
      await this.dispatcher.dispatch('beforeHumanIntervention', { ...step.base(), type: 'beforeHumanIntervention', pendingTools }, step.dispatchOptions);
      await this.store.recordInterventions(
        step.operationId,
        pending.map(({ call, callIndex }) => ({ toolCallId: call.id, stepIndex, callIndex, identifier: call.identifier, apiName: call.apiName, args: call.args, kind: 'approval' as const })),
      );
    }
    return this.store.pause(step.operationId);
  }

  /** `agents/call`: its placeholder known from before (pending or answered), else the child starts now. */
  private async agentCall(step: StepContext, input: ToolCallInput, item: StoredIntervention | undefined, span: TraceSpan): Promise<CallOutcome> {
    if (item?.kind === 'deferred') return item.status === 'pending' ? 'awaiting' : 'done';
    const message = await this.callAgent(step, input);
    return message ? this.publish(step, span, message) : 'awaiting';
  }

  /**
   * The built-in `agents/call` (SPEC A3, V1, P4, P5): the before-chain runs like for any tool; then the
   * parent's placeholder is recorded, `beforeCallAgent` fires on the parent, the child starts, and
   * `afterCallAgent` reports it — or `onCallAgentError`, and the failure is backfilled through the same
   * hooks-then-write path as any deferred result. The child's answer arrives through the completion
   * bridge only. Returns a message to publish now (denied or mocked call), else undefined (waiting).
   */
  private async callAgent(step: StepContext, input: ToolCallInput): Promise<NewMessage | undefined> {
    const { call, operationId } = input;
    const outcome = await this.tools.run(input, { handOut: true });
    if (!('handedOut' in outcome)) return outcome.message;
    await this.store.recordInterventions(operationId, [
      { toolCallId: call.id, stepIndex: input.stepIndex, callIndex: input.callIndex, identifier: call.identifier, apiName: call.apiName, args: call.args, kind: 'deferred' },
    ]);
    const childAgentId = typeof call.args['agentId'] === 'string' ? call.args['agentId'] : '';
    const instruction = typeof call.args['instruction'] === 'string' ? call.args['instruction'] : '';
    // The call's id too: several sub-agent calls of one step are told apart (and de-duplicated) by it.
    const base = { ...agentEventBase(input), agentId: childAgentId, parentAgentId: step.operation.agentId, toolCallId: call.id };
    const { dispatchOptions, subAgents } = step;
    await this.dispatcher.dispatch('beforeCallAgent', { ...base, type: 'beforeCallAgent', instruction }, dispatchOptions);
    try {
      if (childAgentId === '' || typeof call.args['instruction'] !== 'string') {
        throw new ToolError('invalid_arguments', 'agents/call needs the string arguments agentId and instruction');
      }
      const child = await subAgents.startChild({ parentOperationId: operationId, parentToolCallId: call.id, agentId: childAgentId, instruction, runContext: input.runContext });
      await this.dispatcher.dispatch(
        'afterCallAgent',
        { ...base, type: 'afterCallAgent', subOperationId: child.operationId, success: true, threadId: child.threadId },
        dispatchOptions,
      );
    } catch (error) {
      // G4: refused because the app is closing — no made-up result; the step is handed back.
      if (error instanceof RuntimeShuttingDownError) throw error;
      const message = error instanceof Error && 'code' in error ? error.message : `the sub-agent could not start (${errorType(error)})`;
      await this.dispatcher.dispatch('onCallAgentError', { ...base, type: 'onCallAgentError', error: { type: errorType(error), message } }, dispatchOptions);
      await subAgents.completeDeferred(operationId, call.id, { content: `Error: ${message}`, success: false });
    }
    return undefined;
  }

  /** A deferred call: its placeholder known from before (pending or answered), else handed out now — unless mocked or denied. */
  private async deferredCall(step: StepContext, input: ToolCallInput, item: StoredIntervention | undefined, span: TraceSpan): Promise<CallOutcome> {
    if (item) return item.status === 'pending' ? 'awaiting' : 'done';
    const outcome = await this.tools.run(input, { handOut: true });
    if (!('handedOut' in outcome)) return this.publish(step, span, outcome.message);
    const { id: toolCallId, identifier, apiName, args } = input.call;
    await this.store.recordInterventions(step.operationId, [{ toolCallId, stepIndex: input.stepIndex, callIndex: input.callIndex, identifier, apiName, args, kind: 'deferred' }]);
    return 'awaiting';
  }

  /** A call this process executes: the whole chain of DESIGN §3, then the publish. */
  private async runHere(step: StepContext, input: ToolCallInput, span: TraceSpan): Promise<CallOutcome> {
    const outcome = await this.tools.run(input);
    // P1: the result is written only now, after result control; message and state change are one transaction.
    return this.publish(step, span, outcome.message, outcome.mocked === true);
  }

  private async publish(step: StepContext, span: TraceSpan, message: NewMessage, mocked = false): Promise<'done'> {
    const { operation, leaseOwner } = step;
    if (span.recording) {
      span.set(this.tracer.captureContent ? { [OURS.toolOutcome]: toolOutcome(message, mocked), [GEN_AI.toolCallResult]: message.content } : { [OURS.toolOutcome]: toolOutcome(message, mocked) });
    }
    // Under a lease the timeline of the hooks that decided this result is durable with it, so a process
    // killed right after the publish leaves no published result without its timeline.
    // The step's end rides along unless the step was halted during the call: then the step commits its end
    // (and in queue mode lets the lease go, or not) itself, as it would without the merge.
    const end = step.endWithPublish !== undefined && !step.halted() ? step.endWithPublish : undefined;
    const committed = await this.store.commit(operation.id, operation.version, message, end ?? {}, leaseOwner, { timelineFirst: leaseOwner !== undefined });
    step.operation = committed.operation;
    if (committed.message) step.messages.push(committed.message);
    if (end) {
      step.endWithPublish = undefined;
      step.ended = true;
      if (end.releaseLease) step.onLeaseReleased?.(committed.operation);
    }
    return 'done';
  }
}

function toolCallInput(step: StepContext, plan: CallPlan, callIndex: number): ToolCallInput {
  const { operation, operationId, runContext, signal } = step;
  const userId = runContext.userId;
  const tool = plan.tools[callIndex];
  return {
    operationId,
    agentId: operation.agentId,
    ...(userId ? { userId } : {}),
    ...(operation.parentOperationId ? { parentOperationId: operation.parentOperationId } : {}),
    ...(operation.threadId ? { threadId: operation.threadId } : {}),
    stepIndex: operation.stepIndex,
    callIndex,
    assistantMessageId: plan.assistant.id,
    call: plan.calls[callIndex]!,
    runContext,
    signal,
    ...(tool ? { tool } : {}),
    environment: step.dispatchOptions.environment,
    ...(step.agent.toolTimeoutMs !== undefined ? { agentTimeoutMs: step.agent.toolTimeoutMs } : {}),
  };
}

/** Waiting for a decision, a deferred result or a child: the call's span says `pending` (no outcome yet). */
function pendingOn(span: TraceSpan, outcome: CallOutcome): CallOutcome {
  if (span.recording && (outcome === 'awaiting' || (typeof outcome === 'object' && outcome.end === WAITING))) span.set({ [OURS.toolOutcome]: 'pending' });
  return outcome;
}

const NO_INTERVENTIONS: ReadonlyMap<string, StoredIntervention> = new Map();

/** A call not handed out and not rejected yet: the budgets still decide whether it starts (F4, F5). */
function mayStillStart(item: StoredIntervention | undefined): boolean {
  return !item || (item.kind === 'approval' && item.status !== 'rejected');
}

function byToolCall(items: readonly StoredIntervention[]): ReadonlyMap<string, StoredIntervention> {
  return new Map(items.map((item) => [item.toolCallId, item]));
}

/** SPEC O1: a call's outcome on its span, from what it published. */
function toolOutcome(message: NewMessage, mocked: boolean): string {
  if (message.error === 'hook_denied') return 'denied';
  if (message.error === 'hook_control_error') return 'control_error';
  const state = message.state as { error?: { type?: unknown } } | undefined;
  if (state?.error?.type === TOOL_NOT_AVAILABLE) return 'tool_not_available';
  if (message.success === false) return 'error';
  return mocked ? 'mocked' : 'ok';
}
