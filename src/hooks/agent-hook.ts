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

export type AgentHookHandler<P extends AgentHookPoint = AgentHookPoint> = (
  event: HookPayloads[P],
) => unknown | Promise<unknown>;

export interface AgentHook<P extends AgentHookPoint = AgentHookPoint> {
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
