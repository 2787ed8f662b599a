/**
 * Runs the delivery worker inside a Nest app (`agentctl worker`, or `serve` in queue mode): `start()` when
 * the process should consume delivery jobs, closed at application shutdown (in-flight posts finish first).
 * Nothing starts on its own, so processes that must not consume (CLI validation) never connect.
 */
import { Inject, Injectable, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { AGENT_HOOKS_MODULE_OPTIONS } from '../../agent-hooks.module-definition.js';
import type { AgentHooksModuleOptions } from '../../agent-hooks.options.js';
import { WebhookError } from '../../webhooks/webhook-error.js';
import { DeliveryFailureTimeline } from './delivery-failure-timeline.js';
import { QUEUED_DELIVERY_OPTIONS, resolveDeliverySettings, type QueuedDeliveryOptions } from './delivery-settings.js';
import { createWebhookDeliveryWorker, type WebhookDeliveryWorker } from './webhook-delivery-worker.js';

@Injectable()
export class WebhookDeliveryWorkerHost implements OnApplicationShutdown {
  private running: WebhookDeliveryWorker | undefined;

  constructor(
    @Inject(AGENT_HOOKS_MODULE_OPTIONS) private readonly options: AgentHooksModuleOptions,
    private readonly timeline: DeliveryFailureTimeline,
    @Optional() @Inject(QUEUED_DELIVERY_OPTIONS) private readonly tuning?: QueuedDeliveryOptions,
  ) {}

  get started(): boolean {
    return this.running !== undefined;
  }

  /** Starts consuming delivery jobs in this process; a second call does nothing. Queue mode only. */
  start(): WebhookDeliveryWorker {
    if (this.options.mode !== 'queue') throw new WebhookError('configuration', "the webhook delivery worker needs mode: 'queue'");
    this.running ??= createWebhookDeliveryWorker(resolveDeliverySettings(this.options, this.tuning), {
      recordFailure: (record) => this.timeline.record(record),
    });
    return this.running;
  }

  async stop(): Promise<void> {
    const running = this.running;
    this.running = undefined;
    await running?.close();
  }

  onApplicationShutdown(): Promise<void> {
    return this.stop();
  }
}
