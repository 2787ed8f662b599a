/**
 * Ports the hooks room needs and other rooms implement (DESIGN §2: `hooks/` imports nothing from them).
 * Each is an optional provider: without one, the dispatcher behaves as if the capability had nothing to do.
 */
import type { AgentHook, AgentHookWebhook } from './agent-hook.js';
import type { HookOutcomeRecord } from './hook-outcome.js';
import type { HookPoint } from './hook-points.js';
import type { RegisteredHook } from './registered-hook.js';

export interface WebhookRequest {
  readonly hook: RegisteredHook;
  readonly point: HookPoint;
  /** The event as serialized for receivers: no callbacks (M2). */
  readonly event: Readonly<Record<string, unknown>>;
  readonly operationId?: string;
  readonly signal?: AbortSignal;
}

/** Sends hook webhooks (the `webhooks/` room). Failures are thrown as errors with a string `code`. */
export interface WebhookDeliveryPort {
  /** A notification (`responseHandling: 'ignore'`): resolves once delivered (or enqueued). */
  notify(request: WebhookRequest): Promise<void>;
  /**
   * A control: resolves with the parsed JSON body, or `undefined` for a notification response
   * (204, empty body, invalid JSON; W11).
   */
  control(request: WebhookRequest): Promise<unknown>;
}
export const WEBHOOK_DELIVERY = Symbol('nest-agent-hooks:WebhookDeliveryPort');

/** Environment hooks by point, as read at one moment (an invalid environment throws at agent points). */
export interface EnvironmentHooks {
  hooksFor(point: HookPoint): readonly RegisteredHook[];
}

/** The current environment's hooks (L1): `hooksFor` reads the environment at each call, never persisted. */
export interface EnvironmentHookSource extends EnvironmentHooks {
  /**
   * One read of the environment, answered from memory afterwards: the runtime takes one per step (and so
   * per resume) and passes it to the step's dispatches, since a `process.env` read costs more than a
   * dispatch without hooks. Without it, the source itself is read at every dispatch.
   */
  snapshot?(): EnvironmentHooks;
}
export const ENVIRONMENT_HOOK_SOURCE = Symbol('nest-agent-hooks:EnvironmentHookSource');

/** Receives one record per hook invocation, synchronously; must not throw (errors are logged). */
export interface HookOutcomeSink {
  record(outcome: HookOutcomeRecord): void;
  /** `false` while the sink would drop every record (the dispatcher then builds none); default active. */
  readonly active?: boolean;
}
export const HOOK_OUTCOME_SINK = Symbol('nest-agent-hooks:HookOutcomeSink');

/**
 * Validates caller hooks with the `webhooks/` room's schema; throws to reject. Returns the normalized
 * webhook (defaults applied, app-relative URL resolved) that the registry stores, or `undefined` for a
 * handler-only hook.
 */
export interface CallerHookValidator {
  validate(hook: AgentHook, index: number): AgentHookWebhook | undefined;
}
export const CALLER_HOOK_VALIDATOR = Symbol('nest-agent-hooks:CallerHookValidator');
