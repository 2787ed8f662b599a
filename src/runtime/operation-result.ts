/** What an operation's `done` resolves with, read from the database once it is completed (DESIGN §6). */
import type { TerminalReason, UsageTotals } from '../hooks/agent-events.js';
import type { RuntimeStore, StoredMessage, StoredOperation } from './runtime-store.port.js';

export interface OperationResult {
  operationId: string;
  status: 'completed';
  reason: TerminalReason;
  content: string;
  usage: UsageTotals;
}

/** The result as stored: the last assistant message and the operation's usage. */
export async function resultOf(store: RuntimeStore, operationId: string, reason: TerminalReason): Promise<OperationResult> {
  const operation = await store.getOperation(operationId);
  return resultFrom(operationId, operation, await store.messages(operationId), reason);
}

/** The result of a row already read as completed: its messages are the one read left. */
export async function completedResult(store: RuntimeStore, operation: StoredOperation): Promise<OperationResult> {
  return resultFrom(operation.id, operation, await store.messages(operation.id), operation.reason ?? 'done');
}

/** The result from the completed operation and its conversation as already read. */
export function resultFrom(operationId: string, operation: StoredOperation | null, messages: readonly StoredMessage[], reason: TerminalReason): OperationResult {
  const lastAssistant = messages.findLast((m) => m.role === 'assistant');
  return {
    operationId,
    status: 'completed',
    reason,
    content: lastAssistant?.content ?? '',
    usage: operation?.usage ?? { inputTokens: 0, outputTokens: 0, costUsd: 0 },
  };
}

/** The result when the database could not be read: `done` still settles with the reason. */
export function emptyResult(operationId: string, reason: TerminalReason): OperationResult {
  return { operationId, status: 'completed', reason, content: '', usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } };
}
