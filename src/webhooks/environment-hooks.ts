/**
 * Environment hooks (L1, L3): one operator-configured webhook, `AGENT_HOOK_WEBHOOK_*`,
 * subscribed to a list of agent events. Always read from the executing process's current environment,
 * never persisted, never restored. The token is sent through a send-time header template, so the hooks
 * built here never hold it.
 */
import type { RegisteredHook } from '../hooks/registered-hook.js';
import { HookConfigurationError } from '../hooks/hook-errors.js';
import { AGENT_HOOK_POINTS, isControlPoint, type AgentHookPoint, type HookPoint } from '../hooks/hook-points.js';
import type { EnvironmentHooks, EnvironmentHookSource } from '../hooks/hook-ports.js';
import { ENVIRONMENT_HOOK_ID_PREFIX } from './environment-hook-id.js';
import { validateWebhookHook } from './webhook-config.schema.js';
import { APP_URL_ENV, resolveWebhookUrl } from './webhook-url.js';

export const ENV_WEBHOOK_URL = 'AGENT_HOOK_WEBHOOK_URL';
export const ENV_WEBHOOK_TOKEN = 'AGENT_HOOK_WEBHOOK_TOKEN';
export const ENV_WEBHOOK_EVENTS = 'AGENT_HOOK_WEBHOOK_EVENTS';
export const ENV_WEBHOOK_RESPONSE_HANDLING = 'AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING';
export const ENV_WEBHOOK_ON_ERROR = 'AGENT_HOOK_WEBHOOK_ON_ERROR';

const NONE: readonly RegisteredHook[] = Object.freeze([]);
const AGENT_POINTS: ReadonlySet<string> = new Set(AGENT_HOOK_POINTS);

function isAgentPoint(value: string): value is AgentHookPoint {
  return AGENT_POINTS.has(value);
}

export interface EnvironmentHookOptions {
  /** Base for an app-relative `AGENT_HOOK_WEBHOOK_URL`; defaults to `AGENT_HOOKS_APP_URL`. */
  readonly appUrl?: string | undefined;
}

/** Errors name the variable, never its value: operators paste tokens into the wrong variable. */
function invalid(variable: string, problem: string): HookConfigurationError {
  return new HookConfigurationError(`environment hooks: ${variable} ${problem}`);
}

function isSet(value: string | undefined): value is string {
  return value !== undefined && value !== '';
}

/** Comma-separated, trimmed, empties dropped, de-duplicated (first position kept). */
function parseEvents(value: string | undefined): AgentHookPoint[] {
  const entries = (value ?? '').split(',').map((entry) => entry.trim()).filter((entry) => entry.length > 0);
  if (entries.length === 0) throw invalid(ENV_WEBHOOK_EVENTS, 'is required when AGENT_HOOK_WEBHOOK_URL is set (comma-separated agent hook types)');
  const events: AgentHookPoint[] = [];
  entries.forEach((entry, index) => {
    if (!isAgentPoint(entry)) {
      throw invalid(ENV_WEBHOOK_EVENTS, `entry ${index + 1} is not an agent hook type (e.g. afterToolCall)`);
    }
    if (!events.includes(entry)) events.push(entry);
  });
  return events;
}

function parseResponseHandling(value: string | undefined): 'ignore' | 'toolCall' {
  const mode = (value ?? '').trim();
  if (mode === '' || mode === 'ignore') return 'ignore';
  if (mode === 'toolCall') return 'toolCall';
  if (mode === 'toolResult' || mode === 'toolCallAndResult') {
    // W10: name the replacement; the event list picks before and/or after.
    throw invalid(ENV_WEBHOOK_RESPONSE_HANDLING, "holds a removed mode (toolResult / toolCallAndResult); use 'toolCall' and choose the phases with AGENT_HOOK_WEBHOOK_EVENTS");
  }
  throw invalid(ENV_WEBHOOK_RESPONSE_HANDLING, "must be 'ignore' or 'toolCall'");
}

function parseOnError(value: string | undefined): 'continue' | 'block' {
  const policy = (value ?? '').trim();
  if (policy === '' || policy === 'continue') return 'continue';
  if (policy === 'block') return 'block';
  throw invalid(ENV_WEBHOOK_ON_ERROR, "must be 'continue' or 'block'");
}

/**
 * Builds the environment hooks from `env`: none when `AGENT_HOOK_WEBHOOK_URL` is unset or empty, else one
 * per listed event. Throws `HookConfigurationError` naming the variable for any invalid setting.
 */
export function readEnvironmentHooks(env: NodeJS.ProcessEnv = process.env, options: EnvironmentHookOptions = {}): RegisteredHook[] {
  const rawUrl = env[ENV_WEBHOOK_URL];
  if (!isSet(rawUrl)) return [];
  const resolution = resolveWebhookUrl(rawUrl, options.appUrl ?? env[APP_URL_ENV]);
  if ('problem' in resolution) throw invalid(ENV_WEBHOOK_URL, resolution.problem);
  if (!isSet(env[ENV_WEBHOOK_TOKEN])) throw invalid(ENV_WEBHOOK_TOKEN, 'is required when AGENT_HOOK_WEBHOOK_URL is set');
  const events = parseEvents(env[ENV_WEBHOOK_EVENTS]);
  const responseHandling = parseResponseHandling(env[ENV_WEBHOOK_RESPONSE_HANDLING]);
  const onError = parseOnError(env[ENV_WEBHOOK_ON_ERROR]);
  if (responseHandling === 'toolCall' && !events.some((event) => isControlPoint(event))) {
    throw invalid(ENV_WEBHOOK_RESPONSE_HANDLING, "is 'toolCall' but AGENT_HOOK_WEBHOOK_EVENTS lists no control point (beforeToolCall, afterToolCall, beforeModelCall, afterModelCall)");
  }
  if (onError === 'block' && responseHandling !== 'toolCall') {
    throw invalid(ENV_WEBHOOK_ON_ERROR, "is 'block' but only a control can block: set AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING=toolCall");
  }

  return events.map((event) => {
    const id = `${ENVIRONMENT_HOOK_ID_PREFIX}${event}`;
    const control = responseHandling === 'toolCall' && isControlPoint(event);
    const webhook = validateWebhookHook(
      {
        id,
        type: event,
        webhook: {
          url: resolution.url,
          // A template, expanded at each send: the token is read where and when it is used (S2, W6).
          headers: { Authorization: `Bearer \${${ENV_WEBHOOK_TOKEN}}` },
          allowedEnvVars: [ENV_WEBHOOK_TOKEN],
          responseHandling: control ? 'toolCall' : 'ignore',
          // onError applies to controls only; notifications keep the default.
          onError: control ? onError : 'continue',
        },
      },
      { where: `environment hook ${id}` },
    );
    return Object.freeze({
      id,
      point: event,
      source: 'environment' as const,
      failurePolicy: 'fail' as const,
      onError: webhook.onError ?? 'continue',
      // `control` marks in-process handler controls; a webhook control is known by its responseHandling.
      control: false,
      order: 0,
      // Frozen at runtime (the shared `AgentHookWebhook` type is mutable): hooks are shared by every caller.
      webhook: Object.freeze({
        ...webhook,
        headers: Object.freeze({ ...webhook.headers }),
        allowedEnvVars: Object.freeze([...(webhook.allowedEnvVars ?? [])]) as string[],
      }),
    });
  });
}

/** The exact inputs of `readEnvironmentHooks`: equal keys mean equal hooks. */
function cacheKey(env: NodeJS.ProcessEnv, appUrl: string | undefined): string {
  return JSON.stringify([
    env[ENV_WEBHOOK_URL] ?? null,
    // Only whether the token is set shapes the hooks (its value is read at send time), so the key never
    // holds the secret.
    isSet(env[ENV_WEBHOOK_TOKEN]),
    env[ENV_WEBHOOK_EVENTS] ?? null,
    env[ENV_WEBHOOK_RESPONSE_HANDLING] ?? null,
    env[ENV_WEBHOOK_ON_ERROR] ?? null,
    appUrl ?? env[APP_URL_ENV] ?? null,
  ]);
}

/** One parse of the variables: the hooks by point, or the configuration error every agent point throws. */
class ParsedEnvironment implements EnvironmentHooks {
  constructor(
    readonly key: string,
    private readonly byPoint: ReadonlyMap<HookPoint, readonly RegisteredHook[]>,
    private readonly error: string | undefined,
  ) {}

  hooksFor(point: HookPoint): readonly RegisteredHook[] {
    if (typeof point !== 'string' || !isAgentPoint(point)) return NONE;
    // A fresh error per call: each throw gets the caller's stack.
    if (this.error !== undefined) throw new HookConfigurationError(this.error);
    return this.byPoint.get(point) ?? NONE;
  }
}

/** No `AGENT_HOOK_WEBHOOK_URL`: no environment hooks, whatever else is set. */
const NO_HOOKS: EnvironmentHooks = Object.freeze({ hooksFor: (): readonly RegisteredHook[] => NONE });

/**
 * The `EnvironmentHookSource` (L1): reads the current `process.env` on every call, so hooks added, changed
 * or removed between two dispatches (also across approval or deferred completion) are seen at once. Parsing
 * is memoized on the variables' exact values, in memory only. `snapshot()` is the same read, taken once for
 * a whole step.
 *
 * Invalid settings throw on every call instead of yielding no hooks: an operator who configured a control
 * must never get a silently disabled one (fail-closed). Engine-family points never have environment hooks
 * and are answered without reading the environment.
 */
export class EnvironmentWebhookSource implements EnvironmentHookSource {
  private parsed: ParsedEnvironment | undefined;

  constructor(private readonly options: EnvironmentHookOptions = {}) {}

  hooksFor(point: HookPoint): readonly RegisteredHook[] {
    if (typeof point !== 'string' || !isAgentPoint(point)) return NONE;
    return this.snapshot().hooksFor(point);
  }

  /** The current environment's hooks; never throws (an invalid setting throws where its hooks are asked for). */
  snapshot(): EnvironmentHooks {
    const env = process.env;
    // Fast path for the common case: without a URL there are no environment hooks, whatever else is set.
    if (!isSet(env[ENV_WEBHOOK_URL])) return NO_HOOKS;
    const key = cacheKey(env, this.options.appUrl);
    if (this.parsed?.key !== key) this.parsed = this.parse(env, key);
    return this.parsed;
  }

  private parse(env: NodeJS.ProcessEnv, key: string): ParsedEnvironment {
    try {
      const byPoint = new Map<HookPoint, readonly RegisteredHook[]>();
      for (const hook of readEnvironmentHooks(env, this.options)) byPoint.set(hook.point, Object.freeze([hook]));
      return new ParsedEnvironment(key, byPoint, undefined);
    } catch (error) {
      if (error instanceof HookConfigurationError) return new ParsedEnvironment(key, new Map(), error.message);
      throw error;
    }
  }
}
