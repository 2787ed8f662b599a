/**
 * Webhook payloads (B1–B4): the event's data fields, projected by `eventFields`, tagged with the hook,
 * overlaid by `body`, with `userEmail` resolved through the host's directory when selected. Notification
 * payloads are slimmed; control receivers get the full result they must judge.
 */
import type { AgentHookWebhook } from '../hooks/agent-hook.js';
import { isModelContentPoint, modelCallMetadata } from './model-call-payload.js';
import type { UserDirectory } from './user-directory.js';
import { CANCELLED, UserEmailCache, type EmailLookup, type UserEmailCacheOptions } from './user-email-cache.js';

export { USER_DIRECTORY, type UserDirectory } from './user-directory.js';

/**
 * Never serialized: `mock` is an in-memory callback (M2), `finalState` is for local handlers only (B2), and
 * `userEmail` only ever comes from the directory, so neither an event nor a body can claim one (B3).
 */
const NEVER_SENT = ['mock', 'finalState', 'userEmail'] as const;
const NEVER_SENT_KEYS: ReadonlySet<string> = new Set(NEVER_SENT);
const EMAIL_FIELD = 'userEmail';

function hasOwn(target: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(target, key);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A copy of `event` whose `result` has no `data` (the structured, possibly large raw output, B2). The input
 * is never mutated: the in-process registry and local handlers keep the full result.
 */
export function redactResultForEvents<T extends Readonly<Record<string, unknown>>>(event: T): T {
  const copy: Record<string, unknown> = { ...event };
  const result = event['result'];
  if (isPlainObject(result) && hasOwn(result, 'data')) {
    const { data: _data, ...slim } = result;
    copy['result'] = slim;
  }
  return copy as T;
}

/** The event's own data fields: no callbacks, nothing server-only. */
function dataFields(event: Readonly<Record<string, unknown>>): [string, unknown][] {
  return Object.entries(event).filter(([key, value]) => isSent(key, value));
}

function isSent(key: string, value: unknown): boolean {
  return typeof value !== 'function' && !NEVER_SENT_KEYS.has(key);
}

/** Sets an own, enumerable property as `Object.fromEntries` does: a `__proto__` key is a field, never the prototype. */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * The payload without `eventFields` (the common case) in one pass, without the entry arrays of a
 * projection: the event's data fields, the hook's tags, then the body overlaid (B1).
 */
function unprojected(event: Readonly<Record<string, unknown>>, hookId: string, point: string, body: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  for (const key of Object.keys(event)) {
    const value = event[key];
    if (isSent(key, value)) put(payload, key, value);
  }
  payload['hookId'] = hookId;
  payload['hookType'] = point;
  if (body) for (const key of Object.keys(body)) put(payload, key, body[key]);
  return payload;
}

/** `eventFields` projection (unknown fields skipped). An email-only projection keeps the event `id` (B3). */
function project(data: [string, unknown][], fields: readonly string[]): [string, unknown][] {
  const wanted = new Set(fields);
  const selected = data.filter(([key]) => wanted.has(key));
  if (wanted.has(EMAIL_FIELD) && selected.length === 0) return data.filter(([key]) => key === 'id');
  return selected;
}

export interface PayloadHook {
  readonly id: string;
  readonly point: string;
  readonly webhook: AgentHookWebhook;
}

export interface PayloadBuildOptions {
  /** A control receiver gets the full result; notifications are slimmed (B2). */
  readonly control: boolean;
  /** Cancels this build only; a look-up shared with other builds goes on (B4). */
  readonly signal?: AbortSignal;
}

export type WebhookPayloadBuilderOptions = UserEmailCacheOptions;

/** One per dispatcher (delivery service): its email cache is shared by every hook it builds for (B4). */
export class WebhookPayloadBuilder {
  private readonly emails: UserEmailCache | undefined;

  constructor(directory?: UserDirectory, options: WebhookPayloadBuilderOptions = {}) {
    this.emails = directory ? new UserEmailCache(directory, options) : undefined;
  }

  /** How many users the email cache holds. */
  get cachedUsers(): number {
    return this.emails?.size ?? 0;
  }

  /** The payload to send, or `undefined` when `signal` fired: the caller must then send nothing (B4). */
  async build(
    event: Readonly<Record<string, unknown>>,
    hook: PayloadHook,
    options: PayloadBuildOptions,
  ): Promise<Record<string, unknown> | undefined> {
    const { signal } = options;
    if (signal?.aborted) return undefined;
    const { eventFields, body } = hook.webhook;
    const source = options.control ? event : isModelContentPoint(hook.point) ? modelCallMetadata(event) : redactResultForEvents(event);
    const payload: Record<string, unknown> =
      eventFields === undefined
        ? unprojected(source, hook.id, hook.point, body)
        : Object.fromEntries([
            ...project(dataFields(source), eventFields),
            ['hookId', hook.id],
            ['hookType', hook.point],
            // Last: on overlapping keys the body wins (B1).
            ...Object.entries(body ?? {}),
          ]);
    for (const key of NEVER_SENT) delete payload[key];

    if (eventFields?.includes(EMAIL_FIELD)) {
      // The final effective id: a body's `userId`, even an invalid one, overrides the event's (B3).
      const userId = body && hasOwn(body, 'userId') ? body['userId'] : event['userId'];
      const email = await this.emailFor(userId, signal);
      if (email === CANCELLED) return undefined;
      if (email !== undefined) payload[EMAIL_FIELD] = email;
    }
    return signal?.aborted ? undefined : payload;
  }

  private emailFor(userId: unknown, signal: AbortSignal | undefined): Promise<EmailLookup> {
    if (!this.emails || typeof userId !== 'string' || userId.trim().length === 0) return Promise.resolve(undefined);
    return this.emails.emailFor(userId, signal);
  }
}
