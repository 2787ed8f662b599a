/**
 * The run context as it may be stored (DESIGN §5): an allow-list of fields, so nothing else — above all
 * `authContext.inboundAccessToken` — can reach the database, whatever object the caller passes (a
 * `RunContext`, a request body, a hand-built object). After a restart or a queue hop hooks therefore see
 * the run context without the inbound token (documented).
 */
import type { StoredRunContext } from './records.js';

/** Anything shaped like a `RunContext` (hooks/contexts.ts) or a `StoredRunContext`. */
export interface RunContextSource {
  readonly userId?: string | undefined;
  readonly organizationId?: string | undefined;
  readonly scopes?: readonly string[] | undefined;
  readonly authContext?: { readonly scopes?: readonly string[] } | undefined;
  readonly metadata?: Readonly<Record<string, unknown>> | undefined;
}

export function toStoredRunContext(source: RunContextSource | undefined): StoredRunContext {
  const stored: StoredRunContext = {};
  if (!source) return stored;
  if (typeof source.userId === 'string') stored.userId = source.userId;
  if (typeof source.organizationId === 'string') stored.organizationId = source.organizationId;
  const scopes = source.scopes ?? source.authContext?.scopes;
  if (Array.isArray(scopes)) stored.scopes = scopes.filter((scope): scope is string => typeof scope === 'string');
  // A JSON round trip: a plain, unfrozen copy with functions and symbols gone, as it will read back.
  if (source.metadata && typeof source.metadata === 'object') {
    stored.metadata = JSON.parse(JSON.stringify(source.metadata)) as Record<string, unknown>;
  }
  return stored;
}
