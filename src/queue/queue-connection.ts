/**
 * The Redis connection of queue mode, from the module's `redis` URL (`redis://[user:pass@]host:port[/db]`).
 * BullMQ workers need `maxRetriesPerRequest: null` (blocking commands must wait through reconnects).
 */
import type { ConnectionOptions } from 'bullmq';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export class QueueConfigurationError extends Error {
  override readonly name = 'QueueConfigurationError';
}

export function redisConnection(url: string = DEFAULT_REDIS_URL): ConnectionOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new QueueConfigurationError('redis: not a URL (expected redis://host:port[/db])');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new QueueConfigurationError(`redis: unsupported protocol ${parsed.protocol}`);
  const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0) throw new QueueConfigurationError('redis: the database index must be a non-negative integer');
  return {
    host: parsed.hostname || '127.0.0.1',
    port: parsed.port ? Number(parsed.port) : 6379,
    db,
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
  };
}
