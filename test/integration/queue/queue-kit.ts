/**
 * Queue-mode test helpers: a unique BullMQ prefix per test file (cleaned up after), fast timings so a
 * killed worker is recovered in seconds, and the PostgreSQL schema of the file.
 */
import { Redis } from 'ioredis';
import type { AgentHooksQueueOptions } from '../../../src/agent-hooks.options.js';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export function fastQueue(prefix: string, overrides: AgentHooksQueueOptions = {}): AgentHooksQueueOptions {
  return { prefix, leaseMs: 3_000, lockMs: 3_000, reconcileEveryMs: 1_000, concurrency: 4, ...overrides };
}

export function uniquePrefix(): string {
  return `ahtest-${process.pid}-${Date.now().toString(36)}`;
}

/** Deletes every key of the prefix (BullMQ keeps nothing else). */
export async function dropPrefix(prefix: string, url = REDIS_URL): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** Whether Redis answers; under CI=true a missing Redis is a failure, never a skip. */
export async function redisAvailable(url = REDIS_URL): Promise<boolean> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true, connectTimeout: 2_000, retryStrategy: () => null });
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    if (process.env.CI === 'true') throw new Error(`Redis does not answer at ${url} (CI=true: a missing service is a failure)`);
    return false;
  } finally {
    redis.disconnect();
  }
}
