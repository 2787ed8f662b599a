/**
 * Runs one step of an operation, driven by database state (DESIGN §3, §4): read the operation, check the
 * limits, call the model (unless the step is unfinished — paused for an approval or a deferred result,
 * or interrupted by a restart — then this step resumes it), run each tool call in `callIndex` order
 * (step-calls.ts: each call by its route), fire `afterStep`, and commit the step. Any process holding the
 * same database can run the next step; a step that must wait pauses the operation (status `waiting`) instead.
 */
import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { ToolResultSummary } from '../hooks/agent-events.js';
import type { RunContext } from '../hooks/contexts.js';
import { HookDispatcher } from '../hooks/hook-dispatcher.js';
import type { AgentHookPoint } from '../hooks/hook-points.js';
import { HookRegistry } from '../hooks/hook-registry.js';
import { agentEventBase } from './agent-event-base.js';
import { AGENT_DIRECTORY, type AgentDirectory } from './agent-directory.port.js';
import { Compactor } from './compactor.js';
import { addUsage, toChat } from './conversation.js';
import { isHumanRejection } from './intervention-receipts.js';
import type { ChatRequest, ChatUsage, ModelToolCall } from './models/chat-model.js';
import { reasonOf } from './run-limits.js';
import { RUNTIME_STORE, type NewMessage, type RuntimeStore, type StoredMessage, type StoredOperation } from './runtime-store.port.js';
import { StepCalls, type CallPlan } from './step-calls.js';
import { stepLimitReached } from './budgets.js';
import { WAITING, type StepContext, type StepResult } from './step-context.js';
import type { SubAgents } from './sub-agent.port.js';
import { TOOL_CATALOG, type ToolCatalog } from './tools/tool-types.js';
import { GovernedModelCalls, ModelCallBlocked, type GovernedAnswer } from './governed-model-call.js';
import { hookVerdictState } from '../hooks/tool-verdict.js';
import { AgentTracer } from '../tracing/agent-tracer.js';
import { CallDeltas } from './streaming/call-deltas.js';
import { OPERATION_DELTAS, type OperationDeltas } from './streaming/operation-deltas.port.js';

export type { StepResult } from './step-context.js';

/** Tool call ids are stored in 255-character columns and sent back to providers: printable ASCII only. */
const USABLE_CALL_ID = /^[\x21-\x7e]{1,128}$/;

function usableCallId(id: unknown): id is string {
  return typeof id === 'string' && USABLE_CALL_ID.test(id);
}

export interface StepInput {
  operationId: string;
  runContext: RunContext;
  signal: AbortSignal;
  /** Queue mode: every commit of the step is fenced by this worker's lease. */
  leaseOwner?: string;
  /**
   * Aborted when the application starts closing (SPEC G4): the call in flight finishes, no further call
   * or step begins — the step ends `interrupted` at its next boundary. `signal` is the hard stop.
   */
  stopping?: AbortSignal;
  /** Who starts the children of the step's `agents/call` calls: whoever drives the step (`OperationStart`). */
  subAgents: SubAgents;
  /**
   * Queue mode: when the step goes on (its next step is another job), its last commit also lets the lease
   * go — one statement, not two — and this is called with the operation as committed (the next job's
   * version). Not called when the step ends any other way: the lease is then still the caller's.
   */
  onLeaseReleased?: (operation: StoredOperation) => void;
}

const INTERRUPTED = { terminal: 'interrupted' } as const;
const BLOCKED = { terminal: 'blocked' } as const;

@Injectable()
export class StepExecutor {
  constructor(
    private readonly dispatcher: HookDispatcher,
    private readonly registry: HookRegistry,
    private readonly calls: StepCalls,
    private readonly compactor: Compactor,
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
    @Inject(AGENT_DIRECTORY) private readonly agents: AgentDirectory,
    @Inject(TOOL_CATALOG) private readonly catalog: ToolCatalog,
    private readonly modelCalls: GovernedModelCalls,
    private readonly tracer: AgentTracer,
    @Inject(OPERATION_DELTAS) private readonly deltas: OperationDeltas,
  ) {}

  /** DESIGN §3, one step: `beforeStep` → model call → tool calls in `callIndex` order → `afterStep`. */
  async step(input: StepInput): Promise<StepResult> {
    const begun = await this.begin(input);
    if ('end' in begun) return begun.end;
    // SPEC O3: the step's spans join the operation's trace, whichever process runs it and however late.
    return this.tracer.segment(begun.step.operation, () => this.run(begun.step));
  }

  private async run(step: StepContext): Promise<StepResult> {
    const answer = await this.answerOrResume(step);
    const plan = await this.calls.plan(step, answer);
    let awaitingDeferred = false;
    for (const [callIndex, call] of plan.calls.entries()) {
      if (plan.published.has(call.id)) continue; // already published before a restart or a pause
      if (step.halted()) return INTERRUPTED;
      if (callIndex === plan.calls.length - 1) this.endWithLastCall(step, plan);
      const outcome = await this.calls.run(step, plan, callIndex);
      if (outcome === 'awaiting') awaitingDeferred = true;
      else if (outcome !== 'done') return outcome.end;
    }
    if (awaitingDeferred && (await this.pausedForDeferred(step))) return WAITING;
    const end = await this.finish(step, plan);
    // K3: a denied model call's answer is the reason, with no tool calls; the operation ends `blocked`.
    return end !== undefined && 'terminal' in end && end.terminal === 'done' && isBlockedAnswer(answer) ? BLOCKED : end;
  }

  /**
   * Whether the step may begin — not completed, not waiting, not stopped, the agent still configured and
   * within its limits — and, if so, what the step works with: the caller hooks restored, the agent's
   * offer (G1) and the conversation so far.
   */
  private async begin({ operationId, runContext, signal, leaseOwner, stopping, subAgents, onLeaseReleased }: StepInput): Promise<{ step: StepContext } | { end: StepResult }> {
    const halted = () => signal.aborted || stopping?.aborted === true;
    // The operation and the conversation together: what this process committed last, unless someone moved either since.
    const state = await this.store.stepState(operationId, leaseOwner);
    if (!state) throw new Error(`operation ${operationId} does not exist`);
    const { operation, messages } = state;
    if (operation.status === 'completed') return { end: { terminal: operation.reason ?? 'done' } };
    if (operation.status === 'waiting') return { end: WAITING };
    if (halted()) return { end: INTERRUPTED };
    const agent = this.agents.agent(operation.agentId);
    if (!agent) throw new Error(`agent "${operation.agentId}" is no longer configured`);
    const limit = stepLimitReached(agent.limits, operation);
    if (limit) return { end: { terminal: reasonOf(limit), limit } };

    await this.restoreCallerHooks(operationId);
    const offer = await this.catalog.offer(agent.tools, operation.clientTools);
    const userId = runContext.userId;
    const step: StepContext = {
      operationId,
      runContext,
      signal,
      leaseOwner,
      agent,
      offer,
      messages,
      // One read of the environment for the whole step (L1), not one per dispatch.
      dispatchOptions: { operationId, runContext, signal, environment: this.dispatcher.environmentSnapshot() },
      subAgents,
      operation,
      base: () => agentEventBase({ ...step.operation, operationId, ...(userId ? { userId } : {}) }),
      halted,
      ...(onLeaseReleased && leaseOwner !== undefined ? { onLeaseReleased } : {}),
    };
    return { step };
  }

  /** The step's assistant message: the unfinished step's when this step resumes one, else a new answer. */
  private async answerOrResume(step: StepContext): Promise<StoredMessage> {
    return unfinishedStepAnswer(step.messages, step.operation.stepIndex) ?? (await this.answer(step));
  }

  /** `beforeStep` → compaction if needed → the model call → its answer committed with the usage it cost. */
  private async answer(step: StepContext): Promise<StoredMessage> {
    const { agent, messages, leaseOwner, dispatchOptions } = step;
    await this.dispatcher.dispatch('beforeStep', { ...step.base(), type: 'beforeStep' }, dispatchOptions);
    let answered: GovernedAnswer;
    // K5: the answer's text to the operation's watchers, as it is written (a compaction summary is not streamed).
    const { operationId, operation } = step;
    const deltas = new CallDeltas((text) => this.deltas.publish(operationId, { stepIndex: operation.stepIndex, text }));
    try {
      step.operation = await this.compactor.compactIfNeeded({ operation: step.operation, messages, agent, base: step.base(), dispatchOptions, ...(leaseOwner !== undefined ? { leaseOwner } : {}) });
      answered = await this.modelCalls.complete({ agent, request: this.request(step), operationId, purpose: 'step', base: step.base, dispatchOptions, deltas });
    } catch (error) {
      if (error instanceof ModelCallBlocked) {
        // K3 + K5: the reason is what is published; the denied answer itself was never streamed.
        const message = blockedMessage(error);
        deltas.finish(message.content);
        return this.commitAnswer(step, message, error.usage);
      }
      deltas.close();
      throw error;
    }
    const { response, mocked } = answered;
    // A provider's id is kept when it fits the id columns; an empty, over-long or odd one is replaced.
    const toolCalls = response.toolCalls.map((call) => ({ ...call, id: usableCallId(call.id) ? call.id : `call_${randomUUID()}` }));
    // K3: a mocked answer is marked so on its message; its tool calls go on through G1 like any others.
    const message: NewMessage = { role: 'assistant', content: response.content, ...(toolCalls.length > 0 ? { toolCalls } : {}), ...(mocked ? { state: { mocked: true } } : {}) };
    // K5: the decided content not streamed yet (all of it when held) goes out before the message is committed.
    deltas.finish(response.content);
    return this.commitAnswer(step, message, response.usage);
  }

  /** The step's assistant message, committed with the usage its model call cost. */
  private async commitAnswer(step: StepContext, message: NewMessage, usage: ChatUsage): Promise<StoredMessage> {
    const committed = await this.commit(step, message, { usage: addUsage(step.operation.usage, usage) });
    const assistant = committed.message!;
    step.messages.push(assistant);
    return assistant;
  }

  private request(step: StepContext): ChatRequest {
    const { agent, messages } = step;
    return {
      messages: toChat(messages, agent, step.operation.compaction),
      tools: step.offer.tools.map(({ identifier, apiName, description, parameters }) => ({ identifier, apiName, description, parameters })),
      prompt: messages.find((m) => m.role === 'user')?.content ?? '',
      turn: messages.filter((m) => m.role === 'assistant').length,
      lastToolResult: messages.findLast((m) => m.role === 'tool')?.content ?? '',
      signal: step.signal,
      purpose: 'step' as const,
    };
  }

  /** Deferred results or children's answers are still out: the operation waits — unless every one arrived meanwhile. */
  private async pausedForDeferred(step: StepContext): Promise<boolean> {
    if (await this.store.pause(step.operationId)) return true;
    step.operation = await this.load(step.operationId); // every deferred result arrived during the step
    return false;
  }

  /**
   * The step's end rides on its last call's publish (one commit less per step) when that is safe:
   * every result is published by this step's own commits (no approval, deferred call or child), nothing
   * observes `afterStep` — no hook of any family, no subscriber — so no observer can miss an `afterStep`
   * the end was committed before (a crash in between would lose it; today's order delivers it again). A
   * queue step lets its lease go with that commit too. A step halted during its last call (a cancel, a
   * stopping worker) keeps its end to itself, as before: the publish then carries none.
   */
  private endWithLastCall(step: StepContext, plan: CallPlan): void {
    if (!plan.resultsHere || this.dispatcher.isObserved('afterStep', step.dispatchOptions)) return;
    step.endWithPublish = { stepIndex: step.operation.stepIndex + 1, ...(step.onLeaseReleased ? { releaseLease: true } : {}) };
  }

  /** `afterStep` with what each call published, then the step's commit: `done` when the model called no tool. */
  private async finish(step: StepContext, plan: CallPlan): Promise<StepResult> {
    if (step.ended) {
      // Committed with the last call's publish (`endWithLastCall`). An observer that appeared during that
      // call still hears the step's `afterStep` (at the step's own index; its end is committed already).
      if (this.dispatcher.isObserved('afterStep', step.dispatchOptions)) await this.afterStep(step, plan, step.operation.stepIndex - 1);
      return step.halted() ? INTERRUPTED : undefined;
    }
    step.endWithPublish = undefined;
    await this.afterStep(step, plan, step.operation.stepIndex);
    const { calls } = plan;
    // Queue mode: a step that goes on lets its lease go with this commit (a step that ends keeps it for the end).
    const release = calls.length > 0 && !step.halted() ? step.onLeaseReleased : undefined;
    await this.commit(step, undefined, { stepIndex: step.operation.stepIndex + 1, ...(release ? { releaseLease: true } : {}) });
    release?.(step.operation);
    if (calls.length === 0) return { terminal: 'done' };
    if (step.halted()) return INTERRUPTED;
    return undefined;
  }

  private async afterStep(step: StepContext, { assistant, calls, resultsHere }: CallPlan, stepIndex: number): Promise<void> {
    // Every result published by this step's own commits: they are in `step.messages` (none read back).
    const answered = resultsOf(resultsHere ? step.messages : await this.store.messages(step.operationId), calls);
    await this.dispatcher.dispatch(
      'afterStep',
      {
        ...step.base(),
        stepIndex,
        type: 'afterStep',
        content: assistant.content,
        toolCalls: calls.map(({ id, identifier, apiName }) => ({ toolCallId: id, identifier, apiName })),
        toolResults: answered,
        usage: { ...step.operation.usage },
      },
      step.dispatchOptions,
    );
  }

  /** One of the step's own commits (its answer, its end), fenced by the lease in queue mode. */
  private async commit(step: StepContext, message: NewMessage | undefined, patch: Parameters<RuntimeStore['commit']>[3]): Promise<{ operation: StoredOperation; message?: StoredMessage }> {
    const committed = await this.store.commit(step.operationId, step.operation.version, message, patch, step.leaseOwner);
    step.operation = committed.operation;
    return committed;
  }

  /**
   * A step run by a process that did not start the operation (after a restart; in queue mode, any worker)
   * restores the persisted caller webhooks, in order, templates as stored (L2, W3). Handler functions are
   * gone with the process that registered them.
   */
  async restoreCallerHooks(operationId: string): Promise<void> {
    if (this.registry.hasCallerHooks(operationId)) return;
    const stored = await this.store.callerHooks(operationId);
    if (stored.length === 0) return;
    this.registry.register(
      operationId,
      // `'*'` matches every tool, so dropping it changes nothing; rows stored before W5 refused it on non-tool points still restore.
      stored.map((hook) => ({ id: hook.hookId, type: hook.type as AgentHookPoint, webhook: hook.webhook, ...(hook.matcher && hook.matcher !== '*' ? { matcher: hook.matcher } : {}) })),
    );
  }

  private async load(operationId: string): Promise<StoredOperation> {
    const operation = await this.store.getOperation(operationId);
    if (!operation) throw new Error(`operation ${operationId} does not exist`);
    return operation;
  }
}

/** What each call of the step published, from the conversation (some were published by a resume or a deferred completion). */
function resultsOf(messages: readonly StoredMessage[], calls: readonly ModelToolCall[]): ToolResultSummary[] {
  if (calls.length === 0) return [];
  const byCall = new Map(messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m]));
  return calls.flatMap((call) => {
    const message = byCall.get(call.id);
    if (!message) return [];
    // Stored with the message; a row written before the outcome was stored falls back to the old guess.
    const success = message.success ?? (!message.error && !message.content.startsWith('Error: ') && !isHumanRejection(message));
    return [{ toolCallId: call.id, success, ...(message.error ? { error: message.error } : {}) }];
  });
}

/**
 * The assistant message of a step that has not finished (a resumed step: after a pause, a restart or a
 * crash before `afterStep`). Every step writes exactly one assistant message and finishes by bumping
 * `stepIndex`, so the step is unfinished while there are more assistant messages than finished steps.
 */
function unfinishedStepAnswer(messages: readonly StoredMessage[], finishedSteps: number): StoredMessage | undefined {
  let answers = 0;
  let last: StoredMessage | undefined;
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    answers++;
    last = message;
  }
  return answers > finishedSteps ? last : undefined;
}

/** K3: what a denied model call publishes as the step's answer — the reason, the verdict apart from any state (P3). */
function blockedMessage({ verdict }: ModelCallBlocked): NewMessage {
  return { role: 'assistant', content: verdict.reason, error: verdict.error, state: hookVerdictState(verdict) };
}

/** An answer a model-call control replaced (K3); a resumed step ends `blocked` as the first run would have. */
function isBlockedAnswer(message: StoredMessage): boolean {
  return message.role === 'assistant' && message.error !== undefined;
}
