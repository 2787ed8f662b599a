/**
 * Where `delivery: 'queue' | 'qstash'` notifications go (BullMQ or QStash; provided by the queue room).
 * Templates travel unresolved: the worker resolves headers at send time (W6).
 */
import type { WebhookTraceContext } from './outgoing-headers.js';
import type { HookSource } from '../hooks/registered-hook.js';

export interface QueuedWebhook {
  readonly kind: 'queue' | 'qstash';
  /** Stable across retries (`webhook-id`). */
  readonly webhookId: string;
  readonly hookId: string;
  readonly point: string;
  /** Where the hook came from, for the timeline record of a delivery that finally failed. */
  readonly source?: HookSource;
  readonly operationId?: string;
  /** A tool point's delivery: its call, so a final failure's timeline row carries the call's key (SPEC F1). */
  readonly toolCallId?: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly allowedEnvVars: readonly string[];
  readonly timeoutSeconds: number;
  /** The built payload, serialized. */
  readonly body: string;
  /** SPEC O2: the trace context of the work that enqueued it, sent with every attempt. */
  readonly traceContext?: WebhookTraceContext;
}

export interface QueuedDeliveryPort {
  enqueue(webhook: QueuedWebhook): Promise<void>;
}

/** A host app's own queue port (in any of its modules); it wins over the built-in one. */
export const QUEUED_WEBHOOK_DELIVERY = Symbol('nest-agent-hooks:QueuedDeliveryPort');

/** The built-in port (BullMQ in queue mode, QStash anywhere), used when the host provides none. */
export const DEFAULT_QUEUED_WEBHOOK_DELIVERY = Symbol('nest-agent-hooks:DefaultQueuedDeliveryPort');
