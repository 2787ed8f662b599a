/**
 * Names reserved for the server's own environment hooks (L1), shared by the environment
 * source that uses them and the caller validator that keeps callers out of them.
 */

/** Environment hooks are `server-env-webhook:<event>`; a caller hook cannot take such an id. */
export const ENVIRONMENT_HOOK_ID_PREFIX = 'server-env-webhook:';

/**
 * Variables of this library's own configuration (`AGENT_HOOK_WEBHOOK_TOKEN`, `AGENT_HOOKS_WEBHOOK_SECRET`…).
 * They hold the operator's secrets for the operator's receivers: a caller hook may not list them in
 * `allowedEnvVars`, or it could send them to a URL of its choosing.
 */
const RESERVED_VARIABLE_PREFIXES = ['AGENT_HOOK_WEBHOOK_', 'AGENT_HOOKS_'];

export function isReservedVariable(name: string): boolean {
  const upper = name.toUpperCase();
  return RESERVED_VARIABLE_PREFIXES.some((prefix) => upper.startsWith(prefix));
}
