/** The conversation as the model sees it, and the usage arithmetic of a step, shared by the step and the compactor. */
import type { UsageTotals } from '../hooks/agent-events.js';
import type { ResolvedAgent } from './agent-directory.port.js';
import type { ChatMessage } from './models/chat-model.js';
import type { StoredCompaction, StoredMessage } from './runtime-store.port.js';

/** The model's view: the latest compaction summary stands in for every message it replaced. */
export function toChat(messages: readonly StoredMessage[], agent: ResolvedAgent, compaction?: StoredCompaction): ChatMessage[] {
  const chat: ChatMessage[] = agent.instructions ? [{ role: 'system', content: agent.instructions }] : [];
  if (compaction) chat.push({ role: 'user', content: `Summary of the conversation so far: ${compaction.summary}` });
  for (const m of messages) {
    if (compaction && m.seq <= compaction.throughSeq) continue;
    if (m.role === 'user') chat.push({ role: 'user', content: m.content });
    else if (m.role === 'assistant') chat.push({ role: 'assistant', content: m.content, ...(m.toolCalls?.length ? { toolCalls: m.toolCalls } : {}) });
    else chat.push({ role: 'tool', content: m.content, toolCallId: m.toolCallId ?? '', identifier: m.identifier ?? '', apiName: m.apiName ?? '' });
  }
  return chat;
}

export function addUsage(total: UsageTotals, step: UsageTotals): UsageTotals {
  return {
    inputTokens: total.inputTokens + step.inputTokens,
    outputTokens: total.outputTokens + step.outputTokens,
    costUsd: total.costUsd + step.costUsd,
  };
}
