/**
 * Caller hooks (SPEC A1, A4, W4): what `execAgent({ hooks })` accepts. Only the webhook part is
 * persisted (W3); `handler` lives in memory for the life of the operation.
 */
import type { AgentHookPoint, HookPayloads } from './hook-points.js';

export type WebhookDelivery = 'fetch' | 'queue' | 'qstash';
export type ResponseHandling = 'ignore' | 'toolCall';
export type OnErrorPolicy = 'continue' | 'block';
export type FailurePolicy = 'fail' | 'warn';

/** A webhook's configuration (W4); header values are `${VAR}` templates resolved only at send time (W6). */
export interface AgentHookWebhook {
  url: string;
  delivery?: WebhookDelivery;
  /** Seconds; default 30. */
  timeout?: number;
  headers?: Record<string, string>;
  allowedEnvVars?: string[];
  body?: Record<string, unknown>;
  eventFields?: string[];
  responseHandling?: ResponseHandling;
  onError?: OnErrorPolicy;
  /** `'none'`: never post directly when queue delivery fails; failures become `CriticalHookDeliveryError` (D2, D3). */
  fallback?: 'none' | 'fetch';
}

/** A decision an in-process control may return (W14), with the meaning of a webhook's response body. */
export type HookDecision = { decision: 'allow' } | { decision: 'deny'; reason?: string };

/**
 * An inline handler at point `P`. Any return value is allowed: at `beforeToolCall` / `afterToolCall` a
 * `HookDecision` is a control decision (W14), anything else (and everything elsewhere) is ignored.
 */
export type AgentHookHandler<P extends AgentHookPoint = AgentHookPoint> = (
  event: HookPayloads[P],
) => unknown;

/** One caller hook at one point; `AgentHook` is the union of these, discriminated by `type`. */
export interface AgentHookAt<P extends AgentHookPoint> {
  id: string;
  type: P;
  handler?: AgentHookHandler<P>;
  webhook?: AgentHookWebhook;
  /** Regex over `${identifier}/${apiName}`; tool events only (W5). */
  matcher?: string;
  /** For an in-process control: what a throw or timeout means (DESIGN §6). */
  onError?: OnErrorPolicy;
  timeoutMs?: number;
}

/**
 * A caller hook, discriminated by `type`, so an inline `handler` gets its point's event
 * (`{ type: 'afterToolCall', handler: (e) => e.result }`). `AgentHook<'afterStep' | 'onComplete'>`
 * narrows the union to those points.
 */
export type AgentHook<P extends AgentHookPoint = AgentHookPoint> = { [K in P]: AgentHookAt<K> }[P];
