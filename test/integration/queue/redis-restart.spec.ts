/**
 * Issue 8: Redis only carries work. A private `redis-server` (on a free port, keeping nothing on disk) is
 * killed mid-run and started again empty: every job it held is gone, and the reconciler brings every
 * operation to its terminal state from the database.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { DATABASE_URL, postgresDatabaseOption, uniqueSchemaName } from '../persistence/test-databases.js';
import { ClockTools } from '../../../src/server/clock.tools.js';
import { bootRuntime, eventually, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { pause } from '../../support/eventually.js';
import { startReceiver, type LoopbackReceiver } from '../../unit/webhooks/loopback-receiver.js';
import { fastQueue, queueSuite, redisAvailable, uniquePrefix } from './queue-kit.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

const CONFIG = scriptedConfig({
  system: 'redis-restart',
  models: {
    plain: [toolCalls(call('clock/now')), toolCalls(call('clock/now')), toolCalls(call('clock/now')), answer('It is {{lastToolResult}}.')],
  },
  agents: {
    plain: { model: 'plain', tools: ['clock/*'] },
  },
});

// Probed at collection time: without PostgreSQL or Redis the test shows as skipped (a failure under CI=true).
const describeWithServices = await queueSuite('queue/redis-restart.spec.ts', 'the Redis restart mid-run');

const schema = uniqueSchemaName();
let port = 0;
let redis: ChildProcess | undefined;
let api: RuntimeApp | undefined;
let worker: RuntimeApp | undefined;
let receiver: LoopbackReceiver;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port: found } = server.address() as { port: number };
      server.close(() => resolve(found));
    });
  });
}

async function startRedis(): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  await eventually(() => redisAvailable(`redis://127.0.0.1:${port}`).catch(() => false), 'the private redis-server to start', 10_000);
  return child;
}

async function stopRedis(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

function slowAllow(req: IncomingMessage, res: ServerResponse): void {
  req.on('end', () => setTimeout(() => res.writeHead(204).end(), 80));
}

// Top-level hooks run only when the describe below is not skipped.
beforeAll(async () => {
  port = await freePort();
  redis = await startRedis();
  receiver = await startReceiver({ '/control': slowAllow });
  const database = postgresDatabaseOption(schema);
  const url = `redis://127.0.0.1:${port}`;
  const webhooks = { allowNetworks: ['127.0.0.1/32'] };
  const prefix = uniquePrefix();
  api = await bootRuntime({ observe: true, config: CONFIG, database, webhooks, module: { mode: 'queue', redis: url, queue: fastQueue(prefix, { worker: false }) } });
  // The worker runs the steps, so it has the tool the agent lists (G7: an entry must select a registered tool).
  worker = await bootRuntime({ observe: true, config: CONFIG, database, webhooks, providers: [ClockTools], module: { mode: 'queue', redis: url, queue: fastQueue(prefix) } });
}, 60_000);

afterAll(async () => {
  await worker?.close();
  await api?.close();
  await stopRedis(redis);
  await receiver?.close();
  const admin = new DataSource({ type: 'postgres', url: DATABASE_URL, poolSize: 1 });
  await admin.initialize();
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => admin.destroy());
}, 60_000);

describeWithServices('a Redis restart mid-run', () => {
  it('issue 8: jobs lost with Redis are re-enqueued by the reconciler; every operation reaches its terminal state once', async () => {
    if (!api) throw new Error('the API app did not boot');
    const hooks = [{ id: 'control', type: 'afterToolCall' as const, webhook: { url: receiver.url('/control'), responseHandling: 'toolCall' as const } }];
    const started = await Promise.all(Array.from({ length: 10 }, (_, i) => api!.runtime.execAgent({ agentId: 'plain', prompt: `op ${i}`, hooks })));
    // Mid-run: the worker is in a tool call's control (so jobs are held and queued in Redis), and no
    // operation has finished yet.
    await eventually(() => receiver.requests.some((r) => r.path === '/control'), 'a step running on the worker', 20_000);
    expect(worker!.events.some((e) => e.point === 'onComplete')).toBe(false);
    await stopRedis(redis);
    await pause(1_000, 'the outage itself: a second without Redis');
    redis = await startRedis(); // empty: every queued job is gone
    const results = await within(Promise.all(started.map((s) => s.done)), 'every operation after the restart', 60_000);
    expect(results.map((r) => r.reason)).toEqual(results.map(() => 'done'));
    for (const { operationId } of started) {
      const messages = await api.store.messages(operationId);
      expect(messages.filter((m) => m.role === 'tool')).toHaveLength(3);
      expect(messages.at(-1)?.content).toMatch(/^It is /);
    }
    const completes = worker!.events.filter((e) => e.point === 'onComplete').map((e) => e.operationId);
    for (const { operationId } of started) expect(completes.filter((id) => id === operationId)).toHaveLength(1);
  }, 90_000);
});
