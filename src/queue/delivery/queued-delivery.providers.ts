/**
 * What `AgentHooksModule` registers for queued webhook delivery (DESIGN §4, D3).
 *
 * - `QUEUED_DELIVERY_PROVIDERS`: the built-in queued-delivery port. Safe in every mode: it connects to
 *   Redis only in `mode: 'queue'`, and QStash needs no connection.
 * - `DELIVERY_WORKER_PROVIDERS`: the delivery worker host; a process calls `start()` to consume jobs.
 */
import type { Provider } from '@nestjs/common';
import { DEFAULT_QUEUED_WEBHOOK_DELIVERY } from '../../webhooks/queued-delivery.port.js';
import { DeliveryFailureTimeline } from './delivery-failure-timeline.js';
import { QueuedDeliveryService } from './queued-delivery.service.js';
import { WebhookDeliveryWorkerHost } from './webhook-delivery-worker.host.js';

export const QUEUED_DELIVERY_PROVIDERS: Provider[] = [QueuedDeliveryService, { provide: DEFAULT_QUEUED_WEBHOOK_DELIVERY, useExisting: QueuedDeliveryService }];

export const DELIVERY_WORKER_PROVIDERS: Provider[] = [DeliveryFailureTimeline, WebhookDeliveryWorkerHost];
