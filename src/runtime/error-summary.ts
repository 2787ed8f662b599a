/**
 * The safe summary of why an operation failed (DESIGN §7 `error: { type, summary }`, S3): built from our own
 * fields only — a model error's own summary (model id, HTTP status, an unset variable's name), a failed
 * hook's point and id — never an error message, which may quote a provider's body or a user's text.
 */
import { errorType, HookFailedError } from '../hooks/hook-errors.js';
import { ModelError } from './models/chat-model.js';

export function errorSummary(error: unknown): string {
  if (error instanceof ModelError) return error.summary ?? `the model call failed (${error.code})`;
  if (error instanceof HookFailedError) return `hook ${error.hookId} at ${error.point} failed (${errorType(error.cause)})`;
  return `the operation failed with ${errorType(error)}`;
}
