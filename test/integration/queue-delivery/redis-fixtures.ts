/**
 * Redis helpers for queued-delivery tests: every test gets its own BullMQ key prefix on the shared Redis,
 * reads back everything stored under it, and deletes it afterwards. A private `redis-server` on a free
 * port is started for tests that stop Redis mid-run (the shared one is never touched).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

export const SHARED_REDIS_URL = process.env.AGENT_HOOKS_TEST_REDIS ?? 'redis://127.0.0.1:6379';

/** A prefix no other test (or process) uses; BullMQ prefixes may not contain ':'. */
export function uniquePrefix(): string {
  return `ahtest-${randomUUID().slice(0, 12)}`;
}

/** Every value stored under `prefix`, as one text (hashes, lists, sets, sorted sets, streams, strings). */
export async function dumpKeys(redis: Redis, prefix: string): Promise<string> {
  const parts: string[] = [];
  for (const key of await keysOf(redis, prefix)) {
    const type = await redis.type(key);
    let value: unknown;
    if (type === 'string') value = await redis.get(key);
    else if (type === 'hash') value = await redis.hgetall(key);
    else if (type === 'list') value = await redis.lrange(key, 0, -1);
    else if (type === 'set') value = await redis.smembers(key);
    else if (type === 'zset') value = await redis.zrange(key, 0, -1, 'WITHSCORES');
    else if (type === 'stream') value = await redis.xrange(key, '-', '+');
    parts.push(`${key} ${JSON.stringify(value)}`);
  }
  return parts.join('\n');
}

export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  const keys = await keysOf(redis, prefix);
  if (keys.length > 0) await redis.del(...keys);
}

async function keysOf(redis: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

/** A TCP port nothing listens on (taken from the OS, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface PrivateRedis {
  readonly url: string;
  stop(): Promise<void>;
}

/** A throwaway `redis-server` (no persistence) on a free loopback port. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  for (let tries = 0; ; tries++) {
    try {
      await probe.connect();
      await probe.ping();
      break;
    } catch (error) {
      if (tries > 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  probe.disconnect();
  let stopped: Promise<void> | undefined;
  return {
    url,
    stop: () =>
      (stopped ??= (async () => {
        if (child.exitCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
      })()),
  };
}
