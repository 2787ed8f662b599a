/**
 * The safe summary of why an operation failed (DESIGN §7 `error: { type, summary }`, S3): built from our own
 * fields only — a model error's own summary (model id, HTTP status, an unset variable's name), a failed
 * hook's point and id — never an error message, which may quote a provider's body or a user's text.
 */
import { errorType, HookFailedError } from '../hooks/hook-errors.js';
import type { ReachedLimit } from '../hooks/agent-events.js';
import { ModelError } from './models/chat-model.js';
import { limitRecord } from './run-limits.js';
import type { TerminalFailure } from './runtime-store.port.js';

export function errorSummary(error: unknown): string {
  if (error instanceof ModelError) return error.summary ?? `the model call failed (${error.code})`;
  if (error instanceof HookFailedError) return `hook ${error.hookId} at ${error.point} failed (${errorType(error.cause)})`;
  return `the operation failed with ${errorType(error)}`;
}

/**
 * What the terminal transition records: the error's type and summary (never its message, which may hold
 * user input), else the limit that ended the operation, named (F4, F5; run-limits.ts).
 */
export function terminalFailure(error: unknown, limit: ReachedLimit | undefined): TerminalFailure | undefined {
  if (error !== undefined) return { type: errorType(error), summary: errorSummary(error) };
  return limit ? limitRecord(limit) : undefined;
}
