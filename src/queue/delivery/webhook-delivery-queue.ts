/**
 * The producer side of `delivery: 'queue'`: adds one BullMQ job per notification. An enqueue either lands
 * in Redis within `enqueueTimeoutMs` or fails with `queue_unavailable`, so the caller's fallback (D3)
 * applies at once when Redis is down instead of after ioredis's reconnect loop:
 *
 * - the connection has no offline queue: a command while Redis is unreachable fails immediately;
 * - an enqueue waits for the first connection at most `enqueueTimeoutMs`, and not at all during an
 *   outage (ioredis is reconnecting in the background; the next enqueue after it is back succeeds);
 * - the BullMQ `Queue` is created once the connection is ready, so closing never waits on a Redis that
 *   was never reached.
 *
 * An enqueue that timed out may still land later; the job id is the `webhook-id`, so the receiver sees the
 * fallback post and the queued one as the same message (Standard Webhooks de-duplication).
 *
 * BullMQ and ioredis are loaded when the first instance is made (queue mode only).
 */
import { Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { Redis, RedisOptions } from 'ioredis';
import type { QueuedWebhook } from '../../webhooks/queued-delivery.port.js';
import { WebhookError } from '../../webhooks/webhook-error.js';
import { redisConnection } from '../queue-connection.js';
import { DELIVERY_BACKOFF_TYPE, DELIVERY_JOB_NAME, toJobData, type DeliveryJobData } from './delivery-job.js';
import type { DeliverySettings } from './delivery-settings.js';
import { withDeadline } from './with-deadline.js';

interface Connected {
  readonly redis: Redis;
  readonly Queue: typeof Queue;
}

export class WebhookDeliveryQueue {
  private readonly logger = new Logger('AgentHooksDeliveryQueue');
  private readonly connecting: Promise<Connected>;
  private queue: Queue<DeliveryJobData> | undefined;
  private closed = false;
  /** Logs an outage once, not once per reconnect attempt. */
  private down = false;

  constructor(private readonly settings: DeliverySettings) {
    const options: RedisOptions = {
      ...(redisConnection(settings.redisUrl) as RedisOptions),
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      retryStrategy: (times) => Math.min(times * 200, 2_000),
      // A socket that never connected is not closed gracefully: do not keep the process up 2 s for it.
      disconnectTimeout: 200,
    };
    this.connecting = Promise.all([import('ioredis'), import('bullmq')]).then(([{ Redis }, { Queue }]) => {
      const redis = new Redis(options);
      // Error messages may name the Redis host; only the code is logged.
      redis.on('error', (error: unknown) => {
        if (this.down) return;
        this.down = true;
        this.logger.warn(`redis for webhook delivery is unavailable (${codeOf(error) ?? 'error'}); queued deliveries fall back`);
      });
      redis.on('ready', () => {
        if (this.down) this.logger.log('redis for webhook delivery is back');
        this.down = false;
      });
      if (this.closed) redis.disconnect();
      return { redis, Queue };
    });
    this.connecting.catch(() => undefined); // surfaces on the first enqueue
  }

  /** The BullMQ queue name (tests and benchmarks read it). */
  get name(): string {
    return this.settings.queueName;
  }

  async enqueue(webhook: QueuedWebhook): Promise<void> {
    const unavailable = (reason: string) => new WebhookError('queue_unavailable', `could not enqueue delivery of hook ${webhook.hookId} (${reason})`);
    if (this.closed) throw unavailable('closed');
    const connected = await this.connecting;
    await this.ready(connected.redis, unavailable);
    const queue = (this.queue ??= this.createQueue(connected));
    const { keepFailed } = this.settings;
    try {
      await withDeadline(
        queue.add(DELIVERY_JOB_NAME, toJobData(webhook), {
          jobId: webhook.webhookId,
          attempts: this.settings.attempts,
          backoff: { type: DELIVERY_BACKOFF_TYPE, delay: this.settings.backoffDelayMs },
          removeOnComplete: true,
          removeOnFail: { count: keepFailed.count, age: keepFailed.ageSeconds },
        }),
        this.settings.enqueueTimeoutMs,
        () => unavailable('timeout'),
      );
    } catch (error) {
      if (error instanceof WebhookError) throw error;
      throw unavailable(codeOf(error) ?? 'redis error');
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const connected = await this.connecting.catch(() => undefined);
    if (!connected) return;
    const { redis } = connected;
    await this.queue?.close().catch(() => undefined);
    if (redis.status === 'ready') await redis.quit().catch(() => undefined);
    redis.disconnect();
  }

  /** Ready now, or connecting for the first time (wait a bounded time); during an outage, fail at once. */
  private async ready(redis: Redis, unavailable: (reason: string) => WebhookError): Promise<void> {
    const status = redis.status;
    if (status === 'ready') return;
    if (status !== 'connecting' && status !== 'connect') throw unavailable(`redis ${status}`);
    let settle: (error?: Error) => void = () => undefined;
    const waiting = new Promise<void>((resolve, reject) => {
      const onReady = () => settle();
      const onDown = () => settle(unavailable('redis not reachable'));
      settle = (error) => {
        redis.off('ready', onReady).off('error', onDown).off('end', onDown).off('reconnecting', onDown);
        if (error) reject(error);
        else resolve();
      };
      redis.on('ready', onReady).on('error', onDown).on('end', onDown).on('reconnecting', onDown);
    });
    try {
      await withDeadline(waiting, this.settings.enqueueTimeoutMs, () => unavailable('timeout'));
    } finally {
      settle();
    }
  }

  private createQueue({ redis, Queue }: Connected): Queue<DeliveryJobData> {
    const queue = new Queue<DeliveryJobData>(this.settings.queueName, { connection: redis, prefix: this.settings.prefix });
    queue.on('error', () => undefined); // connection errors are logged once by the listener above
    return queue;
  }
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code) ? code : undefined;
}
