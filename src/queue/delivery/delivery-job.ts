/**
 * The BullMQ job of one queued webhook delivery. It carries header templates and the allow-list, never a
 * resolved header (W6, S2): the worker resolves them when it posts. The job id is the `webhook-id`, so an
 * enqueue repeated after a timeout does not add a second job.
 */
import type { QueuedWebhook } from '../../webhooks/queued-delivery.port.js';

export const DELIVERY_JOB_NAME = 'webhook';
/** The custom backoff (exponential, jitter, `Retry-After`) the delivery worker registers under this type. */
export const DELIVERY_BACKOFF_TYPE = 'agent-hooks-webhook';

/** The queued webhook as the job stores it: everything but the route it took to get here. */
export type DeliveryJobData = Omit<QueuedWebhook, 'kind'>;

export function toJobData(webhook: QueuedWebhook): DeliveryJobData {
  return {
    webhookId: webhook.webhookId,
    hookId: webhook.hookId,
    point: webhook.point,
    ...(webhook.source !== undefined ? { source: webhook.source } : {}),
    ...(webhook.operationId !== undefined ? { operationId: webhook.operationId } : {}),
    ...(webhook.toolCallId !== undefined ? { toolCallId: webhook.toolCallId } : {}),
    url: webhook.url,
    headers: { ...webhook.headers },
    allowedEnvVars: [...webhook.allowedEnvVars],
    timeoutSeconds: webhook.timeoutSeconds,
    body: webhook.body,
    ...(webhook.traceContext ? { traceContext: { ...webhook.traceContext } } : {}),
  };
}

/** The job's data if it has the shape this worker posts; a job written by something else is not guessed at. */
export function isDeliveryJobData(data: unknown): data is DeliveryJobData {
  if (data === null || typeof data !== 'object') return false;
  const d = data as Record<string, unknown>;
  return (
    typeof d.webhookId === 'string' &&
    typeof d.hookId === 'string' &&
    typeof d.point === 'string' &&
    typeof d.url === 'string' &&
    typeof d.body === 'string' &&
    typeof d.timeoutSeconds === 'number' &&
    d.headers !== null &&
    typeof d.headers === 'object' &&
    Object.values(d.headers).every((value) => typeof value === 'string') &&
    Array.isArray(d.allowedEnvVars) &&
    d.allowedEnvVars.every((name) => typeof name === 'string') &&
    (d.operationId === undefined || typeof d.operationId === 'string') &&
    (d.traceContext === undefined || isTraceContext(d.traceContext))
  );
}

function isTraceContext(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const t = value as Record<string, unknown>;
  return typeof t.traceparent === 'string' && (t.tracestate === undefined || typeof t.tracestate === 'string');
}
