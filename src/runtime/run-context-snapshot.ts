/** The run context as the database keeps it, and back (DESIGN §5): identity and scopes, never the token. */
import { AuthContext, RunContext } from '../hooks/contexts.js';
import type { StoredRunContext } from './runtime-store.port.js';

/** The run context as stored: scopes and identity, never the inbound access token (DESIGN §5). */
export function storedContext(context: RunContext): StoredRunContext {
  return {
    ...(context.userId !== undefined ? { userId: context.userId } : {}),
    ...(context.organizationId !== undefined ? { organizationId: context.organizationId } : {}),
    ...(context.authContext ? { scopes: [...context.authContext.scopes] } : {}),
    metadata: { ...context.metadata },
  };
}

/** Rebuilds a run context from storage (after a restart): no token (documented, DESIGN §5). */
export function restoredContext(runId: string, stored: StoredRunContext): RunContext {
  return new RunContext({
    runId,
    ...(stored.userId !== undefined ? { userId: stored.userId } : {}),
    ...(stored.organizationId !== undefined ? { organizationId: stored.organizationId } : {}),
    ...(stored.scopes ? { authContext: new AuthContext({ scopes: stored.scopes }) } : {}),
    metadata: stored.metadata ?? {},
  });
}
