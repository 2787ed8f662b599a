/**
 * F1: one idempotency key per tool call, derived from the call's durable identity (its operation and its
 * tool call id, both stored with the assistant message before any call runs). Every attempt, re-run,
 * takeover and process computes the same key without storing it; a hash keeps it opaque, bounded and safe
 * as an HTTP header value whatever id the model emitted.
 */
import { createHash } from 'node:crypto';

/** What the key is sent as: an MCP `tools/call` request's `_meta` field (F1). */
export const MCP_IDEMPOTENCY_META_KEY = 'nest-agent-hooks/idempotencyKey';
/** The HTTP header an MCP `tools/call` request carries the key in (F1). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

const PREFIX = 'nah_';

/** `nah_` and 43 base64url characters: the SHA-256 of the operation id and the tool call id. */
export function toolCallIdempotencyKey(operationId: string, toolCallId: string): string {
  // The separator cannot occur in a UUID operation id, so two different pairs never hash the same text.
  return PREFIX + createHash('sha256').update(operationId).update('\u0000').update(toolCallId).digest('base64url');
}
