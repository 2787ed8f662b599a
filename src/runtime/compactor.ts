/**
 * Compaction (SPEC A3, V): when the conversation the model would see is above the agent's
 * `compactAtTokens`, `beforeCompact` → a summary through the agent's model (`purpose: 'summary'`, governed by
 * the model-call hooks as `purpose: 'compaction'`, K1; a denied summary call blocks the operation, K3; scripted
 * models answer it without consuming a script entry) → the summary replaces every message so far, stored
 * with the operation in the step's transaction → `afterCompact`. Any failure → `onCompactError`, and the run
 * goes on uncompacted. The published conversation is never rewritten: readers of history see every message.
 */
import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { AgentEventBase } from '../hooks/agent-events.js';
import type { RunContext } from '../hooks/contexts.js';
import { errorType } from '../hooks/hook-errors.js';
import { HookDispatcher, type DispatchOptions } from '../hooks/hook-dispatcher.js';
import type { ResolvedAgent } from './agent-directory.port.js';
import { ModelError } from './models/chat-model.js';
import { inputTokens } from './models/token-estimate.js';
import { RUNTIME_STORE, type RuntimeStore, type StoredMessage, type StoredOperation } from './runtime-store.port.js';
import { addUsage, toChat } from './conversation.js';
import { GovernedModelCalls, ModelCallBlocked } from './governed-model-call.js';

export interface CompactionInput {
  operation: StoredOperation;
  messages: readonly StoredMessage[];
  agent: ResolvedAgent;
  base: Omit<AgentEventBase, 'type'>;
  dispatchOptions: DispatchOptions & { operationId: string; runContext: RunContext; signal: AbortSignal };
  leaseOwner?: string;
}

@Injectable()
export class Compactor {
  constructor(
    private readonly dispatcher: HookDispatcher,
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
    /** The summary call is a model call like any other: a `chat` span (SPEC O1), its hooks (K1). */
    private readonly modelCalls: GovernedModelCalls,
  ) {}

  /** The operation after a compaction, or as it was. */
  async compactIfNeeded({ operation, messages, agent, base, dispatchOptions, leaseOwner }: CompactionInput): Promise<StoredOperation> {
    const limit = agent.limits.compactAtTokens;
    if (limit === undefined) return operation;
    const chat = toChat(messages, agent, operation.compaction);
    const tokenCount = inputTokens(chat);
    const last = messages.at(-1);
    // Nothing new since the last compaction: a summary of a summary would not shrink anything.
    if (tokenCount <= limit || !last || (operation.compaction && last.seq <= operation.compaction.throughSeq)) return operation;
    const messageCount = chat.filter((m) => m.role !== 'system').length;
    const stepIndex = operation.stepIndex;
    await this.dispatcher.dispatch('beforeCompact', { ...base, type: 'beforeCompact', messageCount, tokenCount }, dispatchOptions);
    let compacted: StoredOperation;
    let summary: string;
    try {
      const { response } = await this.modelCalls.complete({
        agent,
        request: { messages: chat, tools: [], prompt: messages.find((m) => m.role === 'user')?.content ?? '', signal: dispatchOptions.signal, purpose: 'summary' },
        operationId: operation.id,
        purpose: 'compaction',
        base: () => ({ ...base, id: randomUUID(), timestamp: new Date().toISOString() }),
        dispatchOptions,
      });
      summary = response.content;
      if (summary.trim() === '') throw new ModelError('invalid_response', 'the model returned an empty summary');
      const compaction = { groupId: randomUUID(), summary, throughSeq: last.seq };
      compacted = (await this.store.commit(operation.id, operation.version, undefined, { compaction, usage: addUsage(operation.usage, response.usage) }, leaseOwner)).operation;
    } catch (error) {
      // A denied summary call is no compaction failure: the step ends `blocked` (K3).
      if (dispatchOptions.signal.aborted || error instanceof ModelCallBlocked) throw error;
      // Model errors name provider and status only; anything else is reported by its type (S3).
      const message = error instanceof ModelError ? error.message : `compaction failed (${errorType(error)})`;
      await this.dispatcher.dispatch(
        'onCompactError',
        { ...base, stepIndex, type: 'onCompactError', error: { type: errorType(error), message }, tokenCount },
        dispatchOptions,
      );
      return operation;
    }
    await this.dispatcher.dispatch(
      'afterCompact',
      { ...base, type: 'afterCompact', groupId: compacted.compaction!.groupId, messagesBefore: messageCount, messagesAfter: 1, summary },
      dispatchOptions,
    );
    return compacted;
  }
}
