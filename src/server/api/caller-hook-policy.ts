/**
 * What a caller hook posted over HTTP may not do, on top of the W4 schema every caller hook goes through
 * (the runtime applies it as it registers the hooks). Each refusal is a 400 naming the field.
 * - `allowedEnvVars` only from the operator's allow-list: the caller picks the URL, so any variable it
 *   could name would be sent to it (S2).
 * - no `userId` / `userEmail` in `webhook.body`: the body wins over the event on overlapping keys (B1) and
 *   the email is looked up from the final `userId`, so a body `userId` would pull another user's identity
 *   into the caller's payloads (B3).
 */
import { ENV_VAR_NAME } from '../../webhooks/header-template.js';
import { invalidRequest } from './api-error.js';
import { CALLER_ENV_ALLOWLIST_ENV } from './caller-env-allowlist.js';

const IDENTITY_KEYS = ['userId', 'userEmail'] as const;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function checkCallerHooks(hooks: readonly { webhook: Record<string, unknown> }[], envAllowlist: ReadonlySet<string>): void {
  hooks.forEach((hook, index) => {
    const names = hook.webhook.allowedEnvVars;
    // Other shapes are left to the webhook schema, which runs next and names them.
    if (Array.isArray(names)) {
      names.forEach((name: unknown, at) => {
        if (typeof name === 'string' && !envAllowlist.has(name)) {
          throw invalidRequest(
            `hooks[${index}].webhook.allowedEnvVars[${at}]: ${ENV_VAR_NAME.test(name) ? name : 'this name'} is not in the server's allow-list for caller hooks (${CALLER_ENV_ALLOWLIST_ENV})`,
          );
        }
      });
    }
    const body = hook.webhook.body;
    if (isPlainObject(body)) {
      for (const key of IDENTITY_KEYS) {
        if (Object.prototype.hasOwnProperty.call(body, key)) {
          throw invalidRequest(`hooks[${index}].webhook.body.${key}: is not accepted over HTTP (the user is the API key's owner, B3)`);
        }
      }
    }
  });
}
