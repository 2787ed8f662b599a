/**
 * Runs one step of an operation, driven by database state (DESIGN §3, §4): read the operation, check the
 * limits, call the model (unless the last assistant message still has unpublished tool calls — then this
 * step resumes them), run each tool call in `callIndex` order, publish each result, fire `afterStep`, and
 * commit the step. Any process holding the same database can run the next step.
 */
import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { AgentEventBase, TerminalReason, ToolResultSummary, UsageTotals } from '../hooks/agent-events.js';
import type { RunContext } from '../hooks/contexts.js';
import { HookDispatcher } from '../hooks/hook-dispatcher.js';
import { agentEventBase } from './agent-event-base.js';
import type { AgentHookPoint } from '../hooks/hook-points.js';
import { HookRegistry } from '../hooks/hook-registry.js';
import { AGENT_DIRECTORY, type AgentDirectory, type ResolvedAgent } from './agent-directory.port.js';
import type { ChatMessage, ModelToolCall } from './models/chat-model.js';
import { RUNTIME_STORE, type RuntimeStore, type StoredMessage, type StoredOperation } from './runtime-store.port.js';
import { ToolCallRunner } from './tool-call.runner.js';
import { TOOL_CATALOG, type ToolCatalog } from './tools/tool-types.js';

export interface StepInput {
  operationId: string;
  runContext: RunContext;
  signal: AbortSignal;
}

/** `undefined`: the operation goes on to another step. */
export type StepResult = { terminal: TerminalReason } | undefined;

@Injectable()
export class StepExecutor {
  constructor(
    private readonly dispatcher: HookDispatcher,
    private readonly registry: HookRegistry,
    private readonly tools: ToolCallRunner,
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
    @Inject(AGENT_DIRECTORY) private readonly agents: AgentDirectory,
    @Inject(TOOL_CATALOG) private readonly catalog: ToolCatalog,
  ) {}

  async step({ operationId, runContext, signal }: StepInput): Promise<StepResult> {
    let operation = await this.load(operationId);
    if (operation.status === 'completed') return { terminal: operation.reason ?? 'done' };
    if (signal.aborted) return { terminal: 'interrupted' };
    const agent = this.agents.agent(operation.agentId);
    if (!agent) throw new Error(`agent "${operation.agentId}" is no longer configured`);
    if (operation.stepIndex >= agent.limits.maxSteps) return { terminal: 'max_steps' };
    if (agent.limits.maxCostUsd !== undefined && operation.usage.costUsd >= agent.limits.maxCostUsd) return { terminal: 'cost_limit' };

    await this.restoreCallerHooks(operationId);
    const messages = await this.store.messages(operationId);
    const base = (): Omit<AgentEventBase, 'type'> =>
      agentEventBase({ ...operation, operationId, ...(runContext.userId ? { userId: runContext.userId } : {}) });
    let assistant = lastAssistantWithOpenCalls(messages);
    if (!assistant) {
      await this.dispatcher.dispatch('beforeStep', { ...base(), type: 'beforeStep' }, { operationId, runContext, signal });
      const response = await agent.model.complete({
        messages: toChat(messages, agent),
        tools: (await this.catalog.toolsFor(agent.tools)).map(({ identifier, apiName, description, parameters }) => ({ identifier, apiName, description, parameters })),
        prompt: messages.find((m) => m.role === 'user')?.content ?? '',
        signal,
        purpose: 'step',
      });
      const toolCalls = response.toolCalls.map((call) => ({ ...call, id: call.id || `call_${randomUUID()}` }));
      const committed = await this.store.commit(
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
    const results: ToolResultSummary[] = [];
    for (const [callIndex, call] of calls.entries()) {
      if (published.has(call.id)) continue; // already published before a restart
      if (signal.aborted) return { terminal: 'interrupted' };
      const outcome = await this.tools.run({
        operationId,
        agentId: operation.agentId,
        ...(runContext.userId ? { userId: runContext.userId } : {}),
        ...(operation.parentOperationId ? { parentOperationId: operation.parentOperationId } : {}),
        stepIndex: operation.stepIndex,
        callIndex,
        assistantMessageId: assistant.id,
        call,
        runContext,
        signal,
      });
      // P1: the result is written only now, after result control; message and state change are one transaction.
      operation = (await this.store.commit(operationId, operation.version, outcome.message, {})).operation;
      results.push({ toolCallId: call.id, success: outcome.success, ...(outcome.error ? { error: outcome.error } : {}) });
    }

    await this.dispatcher.dispatch(
      'afterStep',
      {
        ...base(),
        type: 'afterStep',
        content: assistant.content,
        toolCalls: calls.map(({ id, identifier, apiName }) => ({ toolCallId: id, identifier, apiName })),
        toolResults: results,
        usage: { ...operation.usage },
      },
      { operationId, runContext, signal },
    );
    operation = (await this.store.commit(operationId, operation.version, undefined, { stepIndex: operation.stepIndex + 1 })).operation;
    if (calls.length === 0) return { terminal: 'done' };
    if (signal.aborted) return { terminal: 'interrupted' };
    return undefined;
  }

  /**
   * A step run by a process that did not start the operation (after a restart; in queue mode, any worker)
   * restores the persisted caller webhooks, in order, templates as stored (L2, W3). Handler functions are
   * gone with the process that registered them.
   */
  private async restoreCallerHooks(operationId: string): Promise<void> {
    if (this.registry.hasCallerHooks(operationId)) return;
    const stored = await this.store.callerHooks(operationId);
    if (stored.length === 0) return;
    this.registry.register(
      operationId,
      stored.map((hook) => ({ id: hook.hookId, type: hook.type as AgentHookPoint, webhook: hook.webhook, ...(hook.matcher ? { matcher: hook.matcher } : {}) })),
    );
  }

  private async load(operationId: string): Promise<StoredOperation> {
    const operation = await this.store.getOperation(operationId);
    if (!operation) throw new Error(`operation ${operationId} does not exist`);
    return operation;
  }
}

/** The last assistant message, if some of its tool calls have no published result yet (a resumed step). */
function lastAssistantWithOpenCalls(messages: readonly StoredMessage[]): StoredMessage | undefined {
  const index = messages.findLastIndex((m) => m.role === 'assistant');
  if (index < 0) return undefined;
  const assistant = messages[index]!;
  const calls: ModelToolCall[] = assistant.toolCalls ?? [];
  if (calls.length === 0) return undefined;
  const answered = new Set(messages.slice(index + 1).filter((m) => m.role === 'tool').map((m) => m.toolCallId));
  return calls.every((call) => answered.has(call.id)) ? undefined : assistant;
}

function toChat(messages: readonly StoredMessage[], agent: ResolvedAgent): ChatMessage[] {
  const chat: ChatMessage[] = agent.instructions ? [{ role: 'system', content: agent.instructions }] : [];
  for (const m of messages) {
    if (m.role === 'user') chat.push({ role: 'user', content: m.content });
    else if (m.role === 'assistant') chat.push({ role: 'assistant', content: m.content, ...(m.toolCalls?.length ? { toolCalls: m.toolCalls } : {}) });
    else chat.push({ role: 'tool', content: m.content, toolCallId: m.toolCallId ?? '', identifier: m.identifier ?? '', apiName: m.apiName ?? '' });
  }
  return chat;
}

function addUsage(total: UsageTotals, step: UsageTotals): UsageTotals {
  return {
    inputTokens: total.inputTokens + step.inputTokens,
    outputTokens: total.outputTokens + step.outputTokens,
    costUsd: total.costUsd + step.costUsd,
  };
}
