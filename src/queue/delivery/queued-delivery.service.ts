/**
 * The built-in `QueuedDeliveryPort`: `kind: 'queue'` goes to BullMQ (only in `mode: 'queue'`, where Redis is
 * configured), `kind: 'qstash'` to QStash (in any mode). A kind with nowhere to go is a `configuration`
 * error, so the delivery service's fallback applies (D3). A host app's own port wins over this one.
 */
import { Inject, Injectable, Optional, type OnModuleInit } from '@nestjs/common';
import { AGENT_HOOKS_MODULE_OPTIONS } from '../../agent-hooks.module-definition.js';
import type { AgentHooksModuleOptions } from '../../agent-hooks.options.js';
import type { QueuedDeliveryPort, QueuedWebhook } from '../../webhooks/queued-delivery.port.js';
import { WebhookError } from '../../webhooks/webhook-error.js';
import { QUEUED_DELIVERY_OPTIONS, resolveDeliverySettings, type DeliverySettings, type QueuedDeliveryOptions } from './delivery-settings.js';
import { QStashPublisher } from './qstash-publisher.js';
import { WebhookDeliveryQueue } from './webhook-delivery-queue.js';

@Injectable()
export class QueuedDeliveryService implements QueuedDeliveryPort, OnModuleInit {
  readonly settings: DeliverySettings;
  private readonly queueMode: boolean;
  private readonly qstash: QStashPublisher;
  private queue: WebhookDeliveryQueue | undefined;

  constructor(
    @Inject(AGENT_HOOKS_MODULE_OPTIONS) options: AgentHooksModuleOptions,
    @Optional() @Inject(QUEUED_DELIVERY_OPTIONS) tuning?: QueuedDeliveryOptions,
  ) {
    this.settings = resolveDeliverySettings(options, tuning);
    this.queueMode = options.mode === 'queue';
    this.qstash = new QStashPublisher(this.settings);
  }

  /** Connects to Redis at startup in queue mode, so the first notification does not wait for it. */
  onModuleInit(): void {
    if (this.queueMode) this.queue ??= new WebhookDeliveryQueue(this.settings);
  }

  enqueue(webhook: QueuedWebhook): Promise<void> {
    if (webhook.kind === 'qstash') return this.qstash.publish(webhook);
    if (!this.queue) {
      return Promise.reject(new WebhookError('configuration', `delivery 'queue' of hook ${webhook.hookId} needs mode: 'queue' (Redis)`));
    }
    return this.queue.enqueue(webhook);
  }

  /** Closes the delivery queue's Redis connection; the `ShutdownCoordinator` calls it (G4). */
  async close(): Promise<void> {
    await this.queue?.close();
    this.queue = undefined;
  }
}
