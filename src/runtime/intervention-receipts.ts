/**
 * Tool messages the runtime publishes for a call that did not run: a human rejection that lets the run go
 * on (the reason becomes the result, SPEC A3), and a call whose earlier execution cannot be known (claimed
 * by an executor that never published). Neither holds tool output, so neither needs result control (P2).
 * Their `state` says what happened, kept apart from a hook verdict and from a tool's own state (P3).
 */
import type { ModelToolCall } from './models/chat-model.js';
import type { NewMessage } from './runtime-store.port.js';

export const DEFAULT_REJECTION_REASON = 'Rejected by a human reviewer.';

export function rejectionReceipt(call: ModelToolCall, reason: string | undefined): NewMessage {
  const content = reason && reason.trim() !== '' ? reason : DEFAULT_REJECTION_REASON;
  return { ...toolFields(call), content, success: false, state: { humanIntervention: { action: 'reject', ...(reason ? { reason } : {}) } } };
}

export function unknownOutcomeReceipt(call: ModelToolCall): NewMessage {
  return {
    ...toolFields(call),
    content: `Error: ${call.identifier}/${call.apiName} was started before and its outcome is unknown; it was not run again.`,
    success: false,
    state: { execution: 'unknown_outcome' },
  };
}

export function isHumanRejection(message: { state?: Record<string, unknown> }): boolean {
  return message.state?.['humanIntervention'] !== undefined;
}

function toolFields(call: ModelToolCall): Pick<NewMessage, 'role' | 'toolCallId' | 'identifier' | 'apiName'> {
  return { role: 'tool', toolCallId: call.id, identifier: call.identifier, apiName: call.apiName };
}
