/**
 * Where `delivery: 'queue' | 'qstash'` notifications go (BullMQ or QStash; provided by the queue room).
 * Templates travel unresolved: the worker resolves headers at send time (W6).
 */
export interface QueuedWebhook {
  readonly kind: 'queue' | 'qstash';
  /** Stable across retries (`webhook-id`). */
  readonly webhookId: string;
  readonly hookId: string;
  readonly point: string;
  readonly operationId?: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly allowedEnvVars: readonly string[];
  readonly timeoutSeconds: number;
  /** The built payload, serialized. */
  readonly body: string;
}

export interface QueuedDeliveryPort {
  enqueue(webhook: QueuedWebhook): Promise<void>;
}

export const QUEUED_WEBHOOK_DELIVERY = Symbol('nest-agent-hooks:QueuedDeliveryPort');
