/** What the HTTP API reads from the environment once, at start (so a bad value stops the start, exit 2). */
import { ApiKeyRing } from './api-keys.js';
import { callerEnvAllowlistFromEnvironment } from './caller-env-allowlist.js';

export interface ServerApiOptions {
  apiKeys: ApiKeyRing;
  /** Variable names a caller hook may list in `allowedEnvVars`. */
  callerEnvAllowlist: ReadonlySet<string>;
}

export const SERVER_API_OPTIONS = Symbol('nest-agent-hooks:ServerApiOptions');

export function serverApiOptionsFromEnvironment(env: NodeJS.ProcessEnv = process.env): ServerApiOptions {
  return { apiKeys: ApiKeyRing.fromEnvironment(env), callerEnvAllowlist: callerEnvAllowlistFromEnvironment(env) };
}
