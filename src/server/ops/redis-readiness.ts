/**
 * `/readyz` in queue mode also asks Redis (DESIGN §4, §7): a PING on a connection of its own, opened on
 * the first check, bounded by a timeout so a readiness probe never hangs. Idle in local mode.
 */
import { Inject, Injectable, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { redisConnection } from '../../queue/queue-connection.js';

/** The queue's Redis URL; provided only in queue mode. */
export const READINESS_REDIS_URL = Symbol('AgentHooksReadinessRedisUrl');

const PING_TIMEOUT_MS = 2_000;

export class RedisNotReadyError extends Error {
  override readonly name = 'RedisNotReadyError';
  readonly code = 'redis_unavailable';
}

@Injectable()
export class RedisReadiness implements OnApplicationShutdown {
  private client: Redis | undefined;

  constructor(@Optional() @Inject(READINESS_REDIS_URL) private readonly url?: string) {}

  /** Resolves when Redis answers PING (at once in local mode); else `RedisNotReadyError`, never the URL. */
  async check(): Promise<void> {
    if (this.url === undefined) return;
    this.client ??= new Redis({
      ...(redisConnection(this.url) as Record<string, unknown>),
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      connectTimeout: PING_TIMEOUT_MS,
      retryStrategy: (attempt: number) => Math.min(attempt * 200, 2_000),
    });
    // ioredis reports connection errors on the client too; the failed PING below says so to the caller.
    if (this.client.listenerCount('error') === 0) this.client.on('error', () => undefined);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RedisNotReadyError(`redis did not answer within ${PING_TIMEOUT_MS} ms`)), PING_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.client.ping(), timeout]);
    } catch (error) {
      throw error instanceof RedisNotReadyError ? error : new RedisNotReadyError(`redis did not answer (${error instanceof Error ? error.name : typeof error})`);
    } finally {
      clearTimeout(timer);
    }
  }

  onApplicationShutdown(): void {
    this.client?.disconnect();
    this.client = undefined;
  }
}
