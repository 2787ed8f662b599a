/**
 * Runs the delivery worker inside a Nest app. Like the step worker, it starts at application bootstrap in
 * `mode: 'queue'` unless the process opted out of work (`queue.worker: false`, an API-only process), and
 * closes at application shutdown (in-flight posts finish first, each bounded by its timeout). `start()`
 * and `stop()` are there for processes that decide for themselves. BullMQ is loaded only when it starts.
 */
import { Inject, Injectable, Optional, type OnApplicationBootstrap } from '@nestjs/common';
import { AGENT_HOOKS_MODULE_OPTIONS } from '../../agent-hooks.module-definition.js';
import type { AgentHooksModuleOptions } from '../../agent-hooks.options.js';
import { WebhookError } from '../../webhooks/webhook-error.js';
import { DeliveryFailureTimeline } from './delivery-failure-timeline.js';
import { QUEUED_DELIVERY_OPTIONS, resolveDeliverySettings, type QueuedDeliveryOptions } from './delivery-settings.js';
import type { WebhookDeliveryWorker } from './webhook-delivery-worker.js';

@Injectable()
export class WebhookDeliveryWorkerHost implements OnApplicationBootstrap {
  private running: Promise<WebhookDeliveryWorker> | undefined;

  constructor(
    @Inject(AGENT_HOOKS_MODULE_OPTIONS) private readonly options: AgentHooksModuleOptions,
    private readonly timeline: DeliveryFailureTimeline,
    @Optional() @Inject(QUEUED_DELIVERY_OPTIONS) private readonly tuning?: QueuedDeliveryOptions,
  ) {}

  get started(): boolean {
    return this.running !== undefined;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.options.mode !== 'queue' || this.options.queue?.worker === false) return;
    await this.start();
  }

  /** Starts consuming delivery jobs in this process; a second call returns the same worker. Queue mode only. */
  start(): Promise<WebhookDeliveryWorker> {
    if (this.options.mode !== 'queue') return Promise.reject(new WebhookError('configuration', "the webhook delivery worker needs mode: 'queue'"));
    this.running ??= import('./webhook-delivery-worker.js').then(({ createWebhookDeliveryWorker }) =>
      createWebhookDeliveryWorker(resolveDeliverySettings(this.options, this.tuning), {
        recordFailure: (record) => this.timeline.record(record),
      }),
    );
    return this.running;
  }

  async stop(): Promise<void> {
    const running = this.running;
    this.running = undefined;
    const worker = await running?.catch(() => undefined);
    await worker?.close();
  }
}
