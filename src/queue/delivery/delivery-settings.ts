/**
 * Settings of webhook delivery on BullMQ (`delivery: 'queue'`) and QStash (`delivery: 'qstash'`): the module
 * options (`mode`, `redis`, `webhooks`) plus optional tuning under `QUEUED_DELIVERY_OPTIONS`.
 */
import type { AgentHooksModuleOptions } from '../../agent-hooks.options.js';
import { signingSecretOf } from '../../webhooks/outgoing-headers.js';
import { parseAllowNetworks } from '../../webhooks/ssrf-guard.js';
import { DEFAULT_REDIS_URL } from '../queue-connection.js';

/** Tuning of queued delivery; every field has a production default. */
export interface QueuedDeliveryOptions {
  /** BullMQ queue name; `agent-hooks-` is put in front when missing. Default `agent-hooks-webhooks`. */
  queueName?: string;
  /** BullMQ key prefix. Default the deployment's (`queue.prefix`, else `agent-hooks`), like the step queue. */
  prefix?: string;
  /** Attempts per delivery, the first one included. Default 8. */
  attempts?: number;
  /** Delay before the first retry; doubles with each attempt, with jitter. Default 1,000 ms. */
  backoffDelayMs?: number;
  /** Ceiling of the exponential delay. Default 5 minutes. */
  maxBackoffDelayMs?: number;
  /** The longest `Retry-After` waited for; a receiver asking for longer ends the retries. Default 1 hour. */
  maxRetryAfterMs?: number;
  /** Deliveries one worker posts at once. Default 32. */
  concurrency?: number;
  /** How long an enqueue may wait for Redis before the fallback applies (D3). Default 2,000 ms. */
  enqueueTimeoutMs?: number;
  /** Failed delivery jobs kept in Redis for inspection (the timeline keeps the failure regardless). */
  keepFailed?: { count: number; ageSeconds: number };
  /** How long a QStash publish may take before the fallback applies. Default 10,000 ms. */
  publishTimeoutMs?: number;
  /** BullMQ job lock: a killed worker's delivery is retried elsewhere after about this long. Default `queue.lockMs`, else 10 s. */
  lockMs?: number;
}

export const QUEUED_DELIVERY_OPTIONS = Symbol('nest-agent-hooks:QueuedDeliveryOptions');

export const DELIVERY_QUEUE_PREFIX = 'agent-hooks-';

export interface DeliverySettings {
  readonly redisUrl: string;
  readonly queueName: string;
  readonly prefix: string;
  readonly attempts: number;
  readonly backoffDelayMs: number;
  readonly maxBackoffDelayMs: number;
  readonly maxRetryAfterMs: number;
  readonly concurrency: number;
  readonly enqueueTimeoutMs: number;
  readonly keepFailed: { readonly count: number; readonly ageSeconds: number };
  readonly publishTimeoutMs: number;
  readonly lockMs: number;
  /** CIDRs webhooks may reach besides public addresses (the SSRF guard). */
  readonly allowNetworks: readonly string[];
  /** The Standard Webhooks secret, read at use time (S2). */
  readonly signingSecret: () => string | undefined;
}

/** `agent-hooks-<name>`: every queue of ours is recognisable in a shared Redis. */
export function deliveryQueueName(name = 'webhooks'): string {
  return name.startsWith(DELIVERY_QUEUE_PREFIX) ? name : `${DELIVERY_QUEUE_PREFIX}${name}`;
}

export function resolveDeliverySettings(options: AgentHooksModuleOptions, tuning: QueuedDeliveryOptions = {}): DeliverySettings {
  return {
    redisUrl: options.redis ?? DEFAULT_REDIS_URL,
    queueName: deliveryQueueName(tuning.queueName),
    prefix: tuning.prefix ?? options.queue?.prefix ?? 'agent-hooks',
    attempts: positiveInteger(tuning.attempts, 8, 'attempts'),
    backoffDelayMs: positiveInteger(tuning.backoffDelayMs, 1_000, 'backoffDelayMs'),
    maxBackoffDelayMs: positiveInteger(tuning.maxBackoffDelayMs, 5 * 60_000, 'maxBackoffDelayMs'),
    maxRetryAfterMs: positiveInteger(tuning.maxRetryAfterMs, 60 * 60_000, 'maxRetryAfterMs'),
    concurrency: positiveInteger(tuning.concurrency, 32, 'concurrency'),
    enqueueTimeoutMs: positiveInteger(tuning.enqueueTimeoutMs, 2_000, 'enqueueTimeoutMs'),
    keepFailed: tuning.keepFailed ?? { count: 1_000, ageSeconds: 24 * 60 * 60 },
    publishTimeoutMs: positiveInteger(tuning.publishTimeoutMs, 10_000, 'publishTimeoutMs'),
    lockMs: positiveInteger(tuning.lockMs ?? options.queue?.lockMs, 10_000, 'lockMs'),
    allowNetworks: options.webhooks?.allowNetworks ?? parseAllowNetworks(process.env),
    signingSecret: signingSecretOf(options),
  };
}

function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`queued delivery option ${name} must be a positive integer`);
  return value;
}
