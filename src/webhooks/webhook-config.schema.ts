/**
 * The webhook config schema (W4, W10): the shape with zod (strict: unknown keys are
 * rejected), then the rules that span fields or need the hook's type. Every error is a
 * `HookConfigurationError` naming the hook and the key path, never a value: headers, URLs and bodies may
 * hold secrets.
 */
import { z } from 'zod';
import type { AgentHook, AgentHookWebhook } from '../hooks/agent-hook.js';
import { HookConfigurationError } from '../hooks/hook-errors.js';
import { HOOK_POINTS, isControlPoint, isHookPoint } from '../hooks/hook-points.js';
import type { CallerHookValidator } from '../hooks/hook-ports.js';
import { compileMatcher } from '../hooks/matcher.js';
import { matcherScopeProblem } from '../hooks/matcher-scope.js';
import { ENVIRONMENT_HOOK_ID_PREFIX, isReservedVariable } from './environment-hook-id.js';
import { checkHeaderTemplates, ENV_VAR_NAME } from './header-template.js';
import { APP_URL_ENV, isAppRelative, resolveWebhookUrl } from './webhook-url.js';

/** 2^31 − 1 ms, the longest timer Node can arm, in seconds. */
export const MAX_WEBHOOK_TIMEOUT_SECONDS = 2_147_483.647;
export const DEFAULT_WEBHOOK_TIMEOUT_SECONDS = 30;

/** Response modes removed from the reference product; both became `toolCall` (W10). */
const REMOVED_RESPONSE_MODES = new Set(['toolResult', 'toolCallAndResult']);


export const webhookConfigSchema = z.strictObject({
  // Shape only here; the URL rules (and app-relative resolution) run after parsing.
  url: z.string(),
  delivery: z.enum(['fetch', 'queue', 'qstash']).optional(),
  timeout: z
    .number()
    .positive({ error: 'must be greater than 0 seconds' })
    .max(MAX_WEBHOOK_TIMEOUT_SECONDS, { error: `must be at most ${MAX_WEBHOOK_TIMEOUT_SECONDS} seconds` })
    .optional(),
  headers: z.record(z.string(), z.string()).optional(),
  allowedEnvVars: z.array(z.string().regex(ENV_VAR_NAME, { error: 'must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)' })).optional(),
  body: z.record(z.string(), z.unknown()).optional(),
  eventFields: z.array(z.string()).optional(),
  responseHandling: z.enum(['ignore', 'toolCall']).optional(),
  onError: z.enum(['continue', 'block']).optional(),
  // `'fetch'` is the explicit spelling of the default (the `AgentHookWebhook` type allows it).
  fallback: z.enum(['none', 'fetch']).optional(),
});

export type WebhookConfigInput = z.input<typeof webhookConfigSchema>;

/** What the validator needs of a hook: `AgentHook` fits, and so does an untyped object from JSON. */
export interface WebhookHookInput {
  readonly id: string;
  readonly type: string;
  readonly webhook?: unknown;
  readonly matcher?: string | undefined;
  readonly handler?: unknown;
}

export interface WebhookValidationOptions {
  /** Base for app-relative URLs; defaults to `AGENT_HOOKS_APP_URL` from the current environment. */
  readonly appUrl?: string | undefined;
  /** Names the hook in error messages, e.g. `hooks[2] (audit)`. */
  readonly where: string;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `.timeout`, `.headers.X-Team`, `[2]`; odd keys quoted so a message stays one printable line. */
function keyPath(path: readonly PropertyKey[]): string {
  return path
    .map((key) => {
      if (typeof key === 'number') return `[${key}]`;
      const name = String(key);
      return /^[A-Za-z_$][\w$-]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
    })
    .join('');
}

/**
 * Validates a hook's webhook and returns it normalized: defaults filled in (`delivery: 'fetch'`,
 * `timeout: 30`, `responseHandling: 'ignore'`, `onError: 'continue'`), an absolute URL normalized, an
 * app-relative one kept as given (resolved at send time, W4).
 */
export function validateWebhookHook(hook: WebhookHookInput, options: WebhookValidationOptions): AgentHookWebhook {
  const { where } = options;
  const fail: (path: string, message: string) => never = (path, message) => {
    throw new HookConfigurationError(`${where}: ${path}: ${message}`);
  };

  if (!isHookPoint(hook.type) || HOOK_POINTS[hook.type].family !== 'agent') {
    return fail('type', 'must be an agent-family hook type');
  }
  const type = hook.type;
  const raw = hook.webhook;
  if (!isPlainObject(raw)) return fail('webhook', 'must be an object');

  // Before the schema, so the message names the replacement instead of listing the valid options (W10).
  if (typeof raw.responseHandling === 'string' && REMOVED_RESPONSE_MODES.has(raw.responseHandling)) {
    fail('webhook.responseHandling', `'${raw.responseHandling}' was removed; use 'toolCall' (it covers before and after), and choose the phases with the event list`);
  }
  // Object copies would turn an own `__proto__` key into a prototype instead of a field.
  for (const key of ['headers', 'body'] as const) {
    const value = raw[key];
    if (isPlainObject(value) && Object.prototype.hasOwnProperty.call(value, '__proto__')) {
      fail(`webhook.${key}`, 'must not have a "__proto__" key');
    }
  }

  const parsed = webhookConfigSchema.safeParse(raw);
  if (!parsed.success) {
    // zod's messages name types and options, never the input; the path is ours.
    const issues = parsed.error.issues.map((issue) => `webhook${keyPath(issue.path)}: ${issue.message}`);
    throw new HookConfigurationError(`${where}: ${issues.join('; ')}`);
  }
  const webhook = parsed.data;

  const resolution = resolveWebhookUrl(webhook.url, options.appUrl ?? process.env[APP_URL_ENV]);
  if ('problem' in resolution) fail('webhook.url', resolution.problem);
  // W4: an app-relative path is kept as given (and persisted so); each sending process resolves it against
  // its own appUrl. Checking it here still refuses a path that cannot resolve.
  const url = isAppRelative(webhook.url) ? webhook.url : resolution.url;

  checkHeaderTemplates(webhook.headers, webhook.allowedEnvVars, where);
  if (webhook.body !== undefined) {
    try {
      JSON.stringify(webhook.body);
    } catch {
      fail('webhook.body', 'must be JSON-serializable');
    }
  }

  const responseHandling = webhook.responseHandling ?? 'ignore';
  const onError = webhook.onError ?? 'continue';
  const delivery = webhook.delivery ?? 'fetch';
  if (responseHandling === 'toolCall') {
    if (!isControlPoint(type)) fail('webhook.responseHandling', `'toolCall' applies to beforeToolCall and afterToolCall, beforeModelCall and afterModelCall only, not ${type}`);
    // A decision must come back synchronously (DESIGN §4): controls are always direct.
    if (delivery !== 'fetch') fail('webhook.delivery', `must be 'fetch' for a control (responseHandling 'toolCall'), not '${delivery}'`);
    // A control judges the whole event; a trimmed or rewritten payload could hide what it must see.
    if (webhook.eventFields !== undefined) fail('webhook.eventFields', "is not allowed with responseHandling 'toolCall' (a control receives the full event)");
    if (webhook.body !== undefined) fail('webhook.body', "is not allowed with responseHandling 'toolCall' (a control receives the full event)");
    if (hook.handler !== undefined) fail('handler', "a webhook control (responseHandling 'toolCall') cannot also have a handler");
  } else if (onError === 'block') {
    fail('webhook.onError', "'block' requires responseHandling 'toolCall' (only a control can block)");
  }

  const matcher = hook.matcher;
  const scope = matcherScopeProblem(type, matcher);
  if (scope) fail('matcher', scope);
  compileMatcher(matcher, where);

  return {
    url,
    delivery,
    timeout: webhook.timeout ?? DEFAULT_WEBHOOK_TIMEOUT_SECONDS,
    ...(webhook.headers !== undefined ? { headers: webhook.headers } : {}),
    ...(webhook.allowedEnvVars !== undefined ? { allowedEnvVars: webhook.allowedEnvVars } : {}),
    ...(webhook.body !== undefined ? { body: webhook.body } : {}),
    ...(webhook.eventFields !== undefined ? { eventFields: webhook.eventFields } : {}),
    responseHandling,
    onError,
    ...(webhook.fallback !== undefined ? { fallback: webhook.fallback } : {}),
  };
}

/**
 * The `CallerHookValidator` for `execAgent({ hooks })` and the HTTP API: the webhook schema, plus the
 * names reserved for environment hooks (their ids and their variables).
 */
export class WebhookCallerHookValidator implements CallerHookValidator {
  constructor(private readonly options: { appUrl?: string } = {}) {}

  /**
   * Throws `HookConfigurationError` to reject. Returns the normalized webhook (defaults, URL checked) so
   * the registry can store it instead of the raw input; `undefined` for a handler-only hook.
   */
  validate(hook: AgentHook, index: number): AgentHookWebhook | undefined {
    const where = `hooks[${index}]${typeof hook?.id === 'string' ? ` (${hook.id})` : ''}`;
    if (typeof hook !== 'object' || hook === null) throw new HookConfigurationError(`${where}: must be an object`);
    if (typeof hook.id !== 'string' || hook.id.trim().length === 0) {
      throw new HookConfigurationError(`${where}: id must be a non-empty string`);
    }
    if (hook.id.startsWith(ENVIRONMENT_HOOK_ID_PREFIX)) {
      throw new HookConfigurationError(`${where}: id: the prefix ${ENVIRONMENT_HOOK_ID_PREFIX} is reserved for environment hooks`);
    }
    if (hook.webhook === undefined) {
      if (hook.handler === undefined) throw new HookConfigurationError(`${where}: needs a handler or a webhook`);
      return undefined;
    }
    const webhook = validateWebhookHook(hook, { appUrl: this.options.appUrl, where });
    webhook.allowedEnvVars?.forEach((name, at) => {
      if (isReservedVariable(name)) {
        throw new HookConfigurationError(`${where}: webhook.allowedEnvVars[${at}]: ${name} is reserved for the server's own configuration`);
      }
    });
    return webhook;
  }
}
