/**
 * The consumer side of `delivery: 'queue'`: a BullMQ worker posting delivery jobs with the hardened client,
 * retrying with the delivery backoff (exponential, jitter, `Retry-After`), stopping at a 410. Any process
 * with the same Redis may run one; each has its own connections and HTTP client. This module imports BullMQ:
 * load it only in queue mode (the worker host imports it when it starts).
 */
import { Logger } from '@nestjs/common';
import { Worker } from 'bullmq';
import { WebhookHttpClient } from '../../webhooks/webhook-http-client.js';
import { WebhookSender } from '../../webhooks/webhook-sender.js';
import { redisConnection } from '../queue-connection.js';
import { deliveryBackoff } from './delivery-backoff.js';
import type { DeliveryJobData } from './delivery-job.js';
import { deliveryProcessor, type DeliveryFailureRecorder } from './delivery-processor.js';
import type { DeliverySettings } from './delivery-settings.js';

export interface WebhookDeliveryWorker {
  readonly worker: Worker<DeliveryJobData>;
  /** Stops taking jobs, lets the ones in flight finish (each bounded by its timeout), closes connections. */
  close(): Promise<void>;
}

export interface WebhookDeliveryWorkerDeps {
  /** Where a delivery that failed for good is recorded (the operation's timeline). */
  readonly recordFailure?: DeliveryFailureRecorder;
}

export function createWebhookDeliveryWorker(settings: DeliverySettings, deps: WebhookDeliveryWorkerDeps = {}): WebhookDeliveryWorker {
  const logger = new Logger('AgentHooksDeliveryWorker');
  const client = new WebhookHttpClient({ allowNetworks: settings.allowNetworks, connectionsPerOrigin: Math.max(32, settings.concurrency) });
  const sender = new WebhookSender(client, settings.signingSecret);
  const worker = new Worker<DeliveryJobData>(
    settings.queueName,
    deliveryProcessor({ sender, maxRetryAfterMs: settings.maxRetryAfterMs, ...(deps.recordFailure ? { recordFailure: deps.recordFailure } : {}) }),
    {
      connection: redisConnection(settings.redisUrl),
      prefix: settings.prefix,
      concurrency: settings.concurrency,
      // A delivery held by a killed worker is retried elsewhere within seconds (the lock is renewed while a
      // post runs, so a slow receiver within its timeout is not mistaken for a dead worker).
      lockDuration: settings.lockMs,
      stalledInterval: Math.max(1_000, Math.floor(settings.lockMs / 2)),
      maxStalledCount: 10,
      settings: { backoffStrategy: deliveryBackoff(settings) },
    },
  );
  let down = false;
  // Connection errors are reported by code only (a message may name the Redis host); BullMQ reconnects.
  worker.on('error', (error: unknown) => {
    if (down) return;
    down = true;
    const code = (error as { code?: unknown } | null)?.code;
    logger.warn(`delivery worker lost redis (${typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code) ? code : 'error'}); retrying`);
  });
  worker.on('ready', () => {
    down = false;
  });
  let closing: Promise<void> | undefined;
  return {
    worker,
    close: () =>
      (closing ??= (async () => {
        await worker.close();
        await client.close();
      })()),
  };
}
