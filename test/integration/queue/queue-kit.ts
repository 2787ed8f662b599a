/**
 * Queue-mode test helpers: a unique BullMQ prefix per test file (cleaned up after), fast timings so a
 * killed worker is recovered in seconds, and the PostgreSQL schema of the file.
 */
import { Redis } from 'ioredis';
import type { AgentHooksQueueOptions } from '../../../src/agent-hooks.options.js';
import { redisConnection } from '../../../src/queue/queue-connection.js';
import { STEP_QUEUE_NAME } from '../../../src/queue/queue-settings.js';
import { DATABASE_URL, postgresAvailable } from '../persistence/test-databases.js';
import { until } from '../../support/eventually.js';

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

/**
 * For a queue-mode file, which needs PostgreSQL and Redis: `describe` when both answer, else `describe.skip`
 * after a loud warning naming the service that does not and what goes untested, so the skip shows in Jest's
 * summary (DESIGN §11). Under CI=true a missing service fails the file. Probe at collection time, with a
 * top-level await: `const describeWithServices = await queueSuite('queue/x.spec.ts', 'queue mode');`.
 */
export async function queueSuite(file: string, untested: string): Promise<jest.Describe> {
  const missing = [
    ...((await postgresAvailable()) ? [] : [`PostgreSQL at ${new URL(DATABASE_URL).host}`]),
    ...((await redisAvailable()) ? [] : [`Redis at ${new URL(REDIS_URL).host}`]),
  ];
  if (missing.length === 0) return describe;
  const which = `${missing.join(' and ')} ${missing.length > 1 ? 'do' : 'does'} not answer`;
  if (process.env.CI === 'true') throw new Error(`${file}: ${which} (CI=true: a missing service is a failure)`);
  // Loud (DESIGN §11), and on stderr itself: Jest drops the console output of a file whose tests all skip.
  process.stderr.write(`\n!!! ${file}: ${which}: ${untested} is SKIPPED.\n!!! Start it (or set DATABASE_URL / REDIS_URL); under CI=true this is a failure.\n`);
  return describe.skip;
}

/**
 * Waits until the step queue under `prefix` holds no job that is not over (waiting, delayed, running, …):
 * from then on no step of any operation runs until something schedules one again.
 */
export async function untilStepQueueIdle(prefix: string, url = REDIS_URL, timeoutMs = 20_000): Promise<void> {
  const { Queue } = await import('bullmq');
  const queue = new Queue(STEP_QUEUE_NAME, { connection: redisConnection(url), prefix });
  try {
    await until(
      () => queue.getJobCounts('active', 'wait', 'delayed', 'prioritized', 'waiting-children'),
      (counts) => Object.values(counts).every((count) => count === 0),
      `the step queue ${prefix} to hold no job`,
      timeoutMs,
    );
  } finally {
    await queue.close();
  }
}
