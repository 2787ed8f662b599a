/**
 * Turns a validated `POST /v1/operations` body into `execAgent` input: caller hooks stay webhook-only,
 * the caller's owner becomes both the operation's owner and `context.userId` whatever was sent (B3).
 */
import type { AgentHook, AgentHookWebhook } from '../../hooks/agent-hook.js';
import { RunContext } from '../../hooks/contexts.js';
import type { AgentHookPoint } from '../../hooks/hook-points.js';
import type { ExecAgentInput } from '../../runtime/agent-runtime.js';
import type { ClientToolDeclaration } from '../../runtime/tools/client-tools.js';
import type { Caller } from './caller.js';
import type { CreateOperationBody } from './request-bodies.js';

export function execAgentInput(
  body: CreateOperationBody,
  caller: Caller,
  idempotencyKey: string | undefined,
  /** G8: the request body's digest, stored with the key. */
  idempotencyDigest?: string,
): ExecAgentInput {
  const hooks: AgentHook[] = (body.hooks ?? []).map((hook) => ({
    id: hook.id,
    type: hook.type as AgentHookPoint,
    ...(hook.matcher !== undefined ? { matcher: hook.matcher } : {}),
    // Validated by the runtime's caller-hook validator (the W4 schema) as it registers the hook.
    webhook: hook.webhook as unknown as AgentHookWebhook,
  }));
  const context = new RunContext({
    // The runtime gives the run its own id; this one is never used.
    runId: 'http',
    userId: caller.ownerId,
    ...(body.context?.organizationId !== undefined ? { organizationId: body.context.organizationId } : {}),
    metadata: body.context?.metadata ?? {},
  });
  return {
    agentId: body.agentId,
    prompt: body.prompt,
    ...(hooks.length > 0 ? { hooks } : {}),
    context,
    ownerId: caller.ownerId,
    ...(idempotencyKey !== undefined ? { idempotencyKey, ...(idempotencyDigest !== undefined ? { idempotencyDigest } : {}) } : {}),
    // Still untrusted: `execAgent` validates the declarations (and refuses taken names) before storing them.
    ...(body.clientTools !== undefined ? { clientTools: body.clientTools as ClientToolDeclaration[] } : {}),
  };
}
