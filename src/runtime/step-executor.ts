/**
 * Runs one step of an operation, driven by database state (DESIGN §3, §4): read the operation, check the
 * limits, call the model (unless the step is unfinished — paused for an approval or a deferred result,
 * or interrupted by a restart — then this step resumes it), run each tool call in `callIndex` order,
 * publish each result, fire `afterStep`, and commit the step. Any process holding the same database can
 * run the next step; a step that must wait pauses the operation (status `waiting`) instead.
 */
import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { errorType } from '../hooks/hook-errors.js';
import { SUB_AGENTS, type SubAgents } from './sub-agent.port.js';
import { isAgentCall } from './tools/agent-call.tool.js';
import type { AgentEventBase, PendingTool, TerminalReason, ToolResultSummary } from '../hooks/agent-events.js';
import type { RunContext } from '../hooks/contexts.js';
import { HookDispatcher } from '../hooks/hook-dispatcher.js';
import { agentEventBase } from './agent-event-base.js';
import type { AgentHookPoint } from '../hooks/hook-points.js';
import { HookRegistry } from '../hooks/hook-registry.js';
import { AGENT_DIRECTORY, type AgentDirectory, type ResolvedAgent } from './agent-directory.port.js';
import type { ModelToolCall } from './models/chat-model.js';
import { RUNTIME_STORE, type NewMessage, type RuntimeStore, type StoredIntervention, type StoredMessage, type StoredOperation } from './runtime-store.port.js';
import { ToolCallRunner, type ToolCallInput } from './tool-call.runner.js';
import { CallRouter, type CallRoute } from './call-router.js';
import { Compactor } from './compactor.js';
import { addUsage, toChat } from './conversation.js';
import { isHumanRejection, rejectionReceipt, unknownOutcomeReceipt } from './intervention-receipts.js';
import { TOOL_CATALOG, ToolError, type ToolCatalog, type ToolDefinition, type ToolOffer } from './tools/tool-types.js';
import { RuntimeShuttingDownError } from './runtime-errors.js';

/** A call's route in this step: the router's, or `unavailable` for a tool the agent was not offered (G1). */
type StepRoute = CallRoute | 'unavailable';

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
}

/** `undefined`: the operation goes on to another step; `waiting`: it waits for a human or an outside executor. */
export type StepResult = { terminal: TerminalReason } | { waiting: true } | undefined;

const WAITING = { waiting: true } as const;

@Injectable()
export class StepExecutor {
  /** Who claims approved calls from this process: one executor per call (never a second execution). */
  private readonly claimant = `${process.pid}:${randomUUID()}`;

  constructor(
    private readonly dispatcher: HookDispatcher,
    private readonly registry: HookRegistry,
    private readonly tools: ToolCallRunner,
    private readonly router: CallRouter,
    private readonly compactor: Compactor,
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
    @Inject(AGENT_DIRECTORY) private readonly agents: AgentDirectory,
    @Inject(TOOL_CATALOG) private readonly catalog: ToolCatalog,
    private readonly moduleRef: ModuleRef,
  ) {}

  async step({ operationId, runContext, signal, leaseOwner, stopping }: StepInput): Promise<StepResult> {
    const halted = () => signal.aborted || stopping?.aborted === true;
    const commit: RuntimeStore['commit'] = (id, version, message, patch) => this.store.commit(id, version, message, patch, leaseOwner);
    let operation = await this.load(operationId);
    if (operation.status === 'completed') return { terminal: operation.reason ?? 'done' };
    if (operation.status === 'waiting') return WAITING;
    if (halted()) return { terminal: 'interrupted' };
    const agent = this.agents.agent(operation.agentId);
    if (!agent) throw new Error(`agent "${operation.agentId}" is no longer configured`);
    if (operation.stepIndex >= agent.limits.maxSteps) return { terminal: 'max_steps' };
    if (agent.limits.maxCostUsd !== undefined && operation.usage.costUsd >= agent.limits.maxCostUsd) return { terminal: 'cost_limit' };

    await this.restoreCallerHooks(operationId);
    // G1: what this agent's model is offered now — the one lookup every call of the step goes through.
    const offer = await this.catalog.offer(agent.tools, operation.clientTools);
    const messages = await this.store.messages(operationId);
    const userId = runContext.userId;
    const base = (): Omit<AgentEventBase, 'type'> => agentEventBase({ ...operation, operationId, ...(userId ? { userId } : {}) });
    const dispatchOptions = { operationId, runContext, signal };
    let assistant = unfinishedStepAnswer(messages, operation.stepIndex);
    if (!assistant) {
      await this.dispatcher.dispatch('beforeStep', { ...base(), type: 'beforeStep' }, dispatchOptions);
      operation = await this.compactor.compactIfNeeded({ operation, messages, agent, base: base(), dispatchOptions, ...(leaseOwner !== undefined ? { leaseOwner } : {}) });
      const response = await agent.model.complete({
        messages: toChat(messages, agent, operation.compaction),
        tools: offer.tools.map(({ identifier, apiName, description, parameters }) => ({ identifier, apiName, description, parameters })),
        prompt: messages.find((m) => m.role === 'user')?.content ?? '',
        turn: messages.filter((m) => m.role === 'assistant').length,
        lastToolResult: messages.findLast((m) => m.role === 'tool')?.content ?? '',
        signal,
        purpose: 'step',
      });
      // A provider's id is kept when it fits the id columns; an empty, over-long or odd one is replaced.
      const toolCalls = response.toolCalls.map((call) => ({ ...call, id: usableCallId(call.id) ? call.id : `call_${randomUUID()}` }));
      const committed = await commit(
        operationId,
        operation.version,
        { role: 'assistant', content: response.content, ...(toolCalls.length > 0 ? { toolCalls } : {}) },
        { usage: addUsage(operation.usage, response.usage) },
      );
      operation = committed.operation;
      assistant = committed.message!;
      messages.push(assistant);
    }

    const calls = assistant.toolCalls ?? [];
    const published = new Set(messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId));
    const { routes, tools, agentCalls } = this.routesOf(agent, calls, offer);
    const interventions = routes.some((r) => r === 'approval' || r === 'deferred') || agentCalls.some(Boolean) ? byToolCall(await this.store.interventions(operationId)) : NO_INTERVENTIONS;
    let awaitingDeferred = false;
    for (const [callIndex, call] of calls.entries()) {
      if (published.has(call.id)) continue; // already published before a restart or a pause
      if (halted()) return { terminal: 'interrupted' };
      const input: ToolCallInput = {
        operationId,
        agentId: operation.agentId,
        ...(userId ? { userId } : {}),
        ...(operation.parentOperationId ? { parentOperationId: operation.parentOperationId } : {}),
        ...(operation.threadId ? { threadId: operation.threadId } : {}),
        stepIndex: operation.stepIndex,
        callIndex,
        assistantMessageId: assistant.id,
        call,
        runContext,
        signal,
        ...(tools[callIndex] ? { tool: tools[callIndex] } : {}),
      };
      const route = routes[callIndex]!;
      if (route === 'unavailable') {
        operation = await this.publish(operation, (await this.tools.unavailable(input)).message, leaseOwner);
        continue;
      }
      const item = interventions.get(call.id);
      if (route === 'approval') {
        if (!item || item.status === 'pending') {
          const paused = await this.awaitApproval(operationId, operation.stepIndex, calls, callIndex, routes, published, interventions, base, dispatchOptions);
          return paused ? WAITING : undefined; // decided meanwhile: run the step again
        }
        if (item.status === 'rejected') {
          if (item.decision !== 'rejectAndContinue') return { terminal: 'interrupted' };
          // A rejection receipt holds no tool output: published directly (P2).
          operation = await this.publish(operation, rejectionReceipt(call, item.decisionReason), leaseOwner);
          continue;
        }
        if (!(await this.store.claim(operationId, call.id, this.claimant))) {
          // Claimed before (a crash mid-execution): never run blindly a second time.
          operation = await this.publish(operation, unknownOutcomeReceipt(call), leaseOwner);
          continue;
        }
      }
      if (agentCalls[callIndex]) {
        if (item?.kind === 'deferred') {
          if (item.status === 'pending') awaitingDeferred = true;
          continue;
        }
        const published = await this.callAgent(input, operation);
        if (published) operation = await this.publish(operation, published, leaseOwner);
        else awaitingDeferred = true;
        continue;
      }
      if (route === 'deferred') {
        if (item) {
          if (item.status === 'pending') awaitingDeferred = true;
          continue;
        }
        const outcome = await this.tools.run(input, { handOut: true });
        if ('handedOut' in outcome) {
          const { identifier, apiName, args } = call;
          await this.store.recordInterventions(operationId, [{ toolCallId: call.id, stepIndex: operation.stepIndex, callIndex, identifier, apiName, args, kind: 'deferred' }]);
          awaitingDeferred = true;
          continue;
        }
        operation = await this.publish(operation, outcome.message, leaseOwner);
        continue;
      }
      const outcome = await this.tools.run(input);
      // P1: the result is written only now, after result control; message and state change are one transaction.
      operation = await this.publish(operation, outcome.message, leaseOwner);
    }
    if (awaitingDeferred) {
      if (await this.store.pause(operationId)) return WAITING;
      operation = await this.load(operationId); // every deferred result arrived during the step
    }

    const answered = await this.results(operationId, calls);
    await this.dispatcher.dispatch(
      'afterStep',
      {
        ...base(),
        type: 'afterStep',
        content: assistant.content,
        toolCalls: calls.map(({ id, identifier, apiName }) => ({ toolCallId: id, identifier, apiName })),
        toolResults: answered,
        usage: { ...operation.usage },
      },
      dispatchOptions,
    );
    operation = (await commit(operationId, operation.version, undefined, { stepIndex: operation.stepIndex + 1 })).operation;
    if (calls.length === 0) return { terminal: 'done' };
    if (halted()) return { terminal: 'interrupted' };
    return undefined;
  }

  /**
   * Records the approvals this step needs — this call and every later one of the step that needs one —,
   * tells `beforeHumanIntervention` about them (once: a retried step finds them recorded), and pauses.
   * False when nothing is pending any more (decided while this step was getting here).
   */
  private async awaitApproval(
    operationId: string,
    stepIndex: number,
    calls: readonly ModelToolCall[],
    from: number,
    routes: readonly StepRoute[],
    published: ReadonlySet<string | undefined>,
    interventions: ReadonlyMap<string, StoredIntervention>,
    base: () => Omit<AgentEventBase, 'type'>,
    dispatchOptions: { operationId: string; runContext: RunContext; signal: AbortSignal },
  ): Promise<boolean> {
    const pending = calls
      .map((call, callIndex) => ({ call, callIndex }))
      .filter(({ call, callIndex }) => callIndex >= from && routes[callIndex] === 'approval' && !published.has(call.id))
      .filter(({ call }) => (interventions.get(call.id)?.status ?? 'pending') === 'pending');
    const pendingTools: PendingTool[] = pending.map(({ call }) => ({ toolCallId: call.id, identifier: call.identifier, apiName: call.apiName, args: call.args, kind: 'approval' }));
    if (pending.some(({ call }) => !interventions.has(call.id))) {
      await this.dispatcher.dispatch('beforeHumanIntervention', { ...base(), type: 'beforeHumanIntervention', pendingTools }, dispatchOptions);
      await this.store.recordInterventions(
        operationId,
        pending.map(({ call, callIndex }) => ({ toolCallId: call.id, stepIndex, callIndex, identifier: call.identifier, apiName: call.apiName, args: call.args, kind: 'approval' as const })),
      );
    }
    return this.store.pause(operationId);
  }

  /**
   * Each call's offered tool and route. A call the offer does not know is `unavailable` (G1): the agent's
   * `approval` / `deferred` rules never see it. Otherwise the tool decides too (`requiresApproval`,
   * `deferred`, client tools, the built-in sub-agent tool), not only the agent's rules.
   */
  private routesOf(
    agent: ResolvedAgent,
    calls: readonly ModelToolCall[],
    offer: ToolOffer,
  ): { routes: StepRoute[]; tools: (ToolDefinition | undefined)[]; agentCalls: boolean[] } {
    const tools = calls.map((call) => offer.get(call.identifier, call.apiName));
    return {
      routes: calls.map((call, i) => (tools[i] ? this.router.route(agent, tools[i], call) : 'unavailable')),
      tools,
      agentCalls: tools.map((tool) => isAgentCall(tool)),
    };
  }

  /**
   * The built-in `agents/call` (SPEC A3, V1, P4, P5): the before-chain runs like for any tool; then the
   * parent's placeholder is recorded, `beforeCallAgent` fires on the parent, the child starts, and
   * `afterCallAgent` reports it — or `onCallAgentError`, and the failure is backfilled through the same
   * hooks-then-write path as any deferred result. The child's answer arrives through the completion
   * bridge only. Returns a message to publish now (denied or mocked call), else undefined (waiting).
   */
  private async callAgent(input: ToolCallInput, operation: StoredOperation): Promise<NewMessage | undefined> {
    const { call, operationId } = input;
    const outcome = await this.tools.run(input, { handOut: true });
    if (!('handedOut' in outcome)) return outcome.message;
    await this.store.recordInterventions(operationId, [
      { toolCallId: call.id, stepIndex: input.stepIndex, callIndex: input.callIndex, identifier: call.identifier, apiName: call.apiName, args: call.args, kind: 'deferred' },
    ]);
    const childAgentId = typeof call.args['agentId'] === 'string' ? call.args['agentId'] : '';
    const instruction = typeof call.args['instruction'] === 'string' ? call.args['instruction'] : '';
    // The call's id too: several sub-agent calls of one step are told apart (and de-duplicated) by it.
    const base = { ...agentEventBase(input), agentId: childAgentId, parentAgentId: operation.agentId, toolCallId: call.id };
    const dispatchOptions = { operationId, runContext: input.runContext, signal: input.signal };
    await this.dispatcher.dispatch('beforeCallAgent', { ...base, type: 'beforeCallAgent', instruction }, dispatchOptions);
    const subAgents = this.subAgents();
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

  private subAgents(): SubAgents {
    return this.moduleRef.get<SubAgents>(SUB_AGENTS, { strict: false });
  }

  /** What each call of the step published, read back (some were published by a resume or a deferred completion). */
  private async results(operationId: string, calls: readonly ModelToolCall[]): Promise<ToolResultSummary[]> {
    if (calls.length === 0) return [];
    const byCall = new Map((await this.store.messages(operationId)).filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m]));
    return calls.flatMap((call) => {
      const message = byCall.get(call.id);
      if (!message) return [];
      // Stored with the message; a row written before the outcome was stored falls back to the old guess.
      const success = message.success ?? (!message.error && !message.content.startsWith('Error: ') && !isHumanRejection(message));
      return [{ toolCallId: call.id, success, ...(message.error ? { error: message.error } : {}) }];
    });
  }

  private async publish(operation: StoredOperation, message: NewMessage, leaseOwner?: string): Promise<StoredOperation> {
    // Queue mode: the timeline of the hooks that decided this result is written first, so a worker killed
    // right after the publish leaves no published result without its timeline.
    if (leaseOwner !== undefined) await this.store.flushTimeline();
    return (await this.store.commit(operation.id, operation.version, message, {}, leaseOwner)).operation;
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

const NO_INTERVENTIONS: ReadonlyMap<string, StoredIntervention> = new Map();

function byToolCall(items: readonly StoredIntervention[]): ReadonlyMap<string, StoredIntervention> {
  return new Map(items.map((item) => [item.toolCallId, item]));
}

