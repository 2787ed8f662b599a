/**
 * The operator's allow-list for `allowedEnvVars` in caller hooks posted over HTTP (W6, S2).
 * A caller chooses its webhook's URL, so letting it name any server variable would let it send, say,
 * `DATABASE_URL` to itself. `AGENT_HOOKS_CALLER_ENV_ALLOWLIST="HOOK_TOKEN,TEAM_ID"`; empty (the default)
 * allows none. Names only: the values are read at send time (W6).
 */
import { ENV_VAR_NAME } from '../../webhooks/header-template.js';
import { ServerConfigurationError } from './server-configuration-error.js';

export const CALLER_ENV_ALLOWLIST_ENV = 'AGENT_HOOKS_CALLER_ENV_ALLOWLIST';

export function callerEnvAllowlistFromEnvironment(env: NodeJS.ProcessEnv = process.env): ReadonlySet<string> {
  const names = (env[CALLER_ENV_ALLOWLIST_ENV] ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  names.forEach((name, index) => {
    if (!ENV_VAR_NAME.test(name)) {
      throw new ServerConfigurationError(`${CALLER_ENV_ALLOWLIST_ENV} entry ${index + 1}: not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)`);
    }
  });
  return new Set(names);
}
