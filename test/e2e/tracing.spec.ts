/**
 * SPEC O2, O3 across real processes: the built server (and queue workers) with an OpenTelemetry SDK
 * registered the way a deployment does it — a preload (`NODE_OPTIONS=--import …`, see README) — writing
 * every finished span to a file. Checked:
 * - an inbound `traceparent` on `POST /v1/operations` becomes the parent of the operation's `invoke_agent`;
 * - an approval decided after a restart, by another server process on the same database, continues the
 *   same trace (the trace context is stored with the operation);
 * - queue mode: the steps run as jobs on worker processes, and every span of the operation, in whichever
 *   process, is in one trace.
 */
import { jest } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openAgentHooksDataSource } from '../../src/persistence/open-data-source.js';
import { postgresDatabaseOption, uniqueSchemaName } from '../integration/persistence/test-databases.js';
import { dropPrefix, queueSuite, REDIS_URL, uniquePrefix } from '../integration/queue/queue-kit.js';
import { scratch, type Scratch } from './support/e2e-config.js';
import { apiClient, until } from './support/http-client.js';
import { ensureBuilt, startServer, type ServerProcess } from './support/server-process.js';

jest.setTimeout(120_000);

const PRELOAD = resolve('test/e2e/fixtures/otel-file-exporter.mjs');
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

interface FileSpan {
  pid: number;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, unknown>;
}

function spansIn(file: string): FileSpan[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as FileSpan);
}

const traced = (file: string) => ({ NODE_OPTIONS: `--import ${PRELOAD}`, OTEL_TEST_SPANS_FILE: file });

let files: Scratch;
const running: ServerProcess[] = [];

beforeAll(() => {
  ensureBuilt();
  files = scratch('tracing');
});

afterAll(async () => {
  for (const server of running) await server.stop();
  files?.remove();
});

async function serve(database: string, spans: string, args: string[] = []): Promise<ServerProcess> {
  const server = await startServer({ config: files.config, plugins: files.plugins, database, env: traced(spans), args });
  running.push(server);
  return server;
}

async function stop(server: ServerProcess): Promise<void> {
  running.splice(running.indexOf(server), 1);
  expect(await server.stop()).toBe(0);
}

describe('O2/O3 on the standalone server (local mode, SQLite)', () => {
  it('O2: an inbound traceparent on POST /v1/operations becomes the parent of invoke_agent', async () => {
    const spans = join(files.dir, 'inbound.jsonl');
    const server = await serve(files.database('inbound'), spans);
    const api = apiClient(server.url);
    const reply = await fetch(`${server.url}/v1/operations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      body: JSON.stringify({ agentId: 'assistant', prompt: 'What time is it?' }),
    });
    expect(reply.status).toBe(201);
    const { operationId } = (await reply.json()) as { operationId: string };
    await until(() => api.get(`/v1/operations/${operationId}`), (r) => r.body?.status === 'completed', 'the operation completes');
    await stop(server);

    const all = spansIn(spans);
    const root = all.find((span) => span.name === 'invoke_agent assistant' && span.attributes['nest_agent_hooks.operation.id'] === operationId);
    expect(root).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: CALLER_SPAN });
    const tool = all.find((span) => span.name === 'execute_tool clock/now');
    expect(tool?.traceId).toBe(CALLER_TRACE);
  });

  it('O3: an approval decided after a restart, in another server process, continues the operation trace', async () => {
    const spans = join(files.dir, 'restart.jsonl');
    const database = files.database('restart');
    const first = await serve(database, spans);
    const created = await apiClient(first.url).post('/v1/operations', { agentId: 'approver', prompt: 'What time is it?' });
    expect(created.status).toBe(201);
    const operationId = created.body.operationId as string;
    const waiting = await until(() => apiClient(first.url).get(`/v1/operations/${operationId}`), (r) => r.body?.status === 'waiting', 'the operation waits for approval');
    const toolCallId = waiting.body.pendingTools[0].toolCallId as string;
    await stop(first);

    const second = await serve(database, spans);
    const api = apiClient(second.url);
    expect((await api.post(`/v1/operations/${operationId}/interventions/${toolCallId}`, { action: 'approve' })).status).toBe(200);
    await until(() => api.get(`/v1/operations/${operationId}`), (r) => r.body?.status === 'completed', 'the operation completes');
    await stop(second);

    const all = spansIn(spans).filter((span) => span.attributes['nest_agent_hooks.operation.id'] === operationId || span.name.startsWith('execute_tool'));
    const root = all.find((span) => span.name === 'invoke_agent approver' && span.attributes['nest_agent_hooks.operation.resumed'] === undefined);
    expect(root).toBeDefined();
    const later = all.filter((span) => span.pid !== root!.pid);
    // The approved call ran in the second process, under a resumed invoke_agent whose parent is the stored root.
    expect(later.map((span) => span.name)).toEqual(expect.arrayContaining(['invoke_agent approver', 'execute_tool clock/now']));
    expect(later.every((span) => span.traceId === root!.traceId)).toBe(true);
    const resumed = later.filter((span) => span.name === 'invoke_agent approver');
    expect(resumed.every((span) => span.parentSpanId === root!.spanId)).toBe(true);
  });
});

const describeWithServices = await queueSuite('e2e/tracing.spec.ts', 'trace continuity across queue workers');

describeWithServices('O3 in queue mode: steps on worker processes join the operation trace', () => {
  const schema = uniqueSchemaName();
  const database = postgresDatabaseOption(schema);
  const prefix = uniquePrefix();
  const workers: ChildProcess[] = [];

  afterAll(async () => {
    for (const worker of workers) {
      if (worker.exitCode === null) {
        const exited = new Promise((resolve) => worker.once('exit', resolve));
        worker.kill('SIGTERM');
        await exited;
      }
    }
    await dropPrefix(prefix);
    const dataSource = await openAgentHooksDataSource(database, { migrate: false });
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await dataSource.destroy();
  });

  it('O3: every span of a queued operation, in the API process and on two workers, is in one trace', async () => {
    const spans = join(files.dir, 'queue.jsonl');
    const server = await serve(database, spans, ['--mode', 'queue', '--redis', REDIS_URL, '--queue-prefix', prefix]);
    for (let i = 0; i < 2; i++) {
      const worker = spawn(
        process.execPath,
        ['dist/cli/agentctl.js', 'worker', '--config', files.config, '--plugins', files.plugins, '--database', database, '--redis', REDIS_URL, '--queue-prefix', prefix],
        { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...traced(spans) } },
      );
      workers.push(worker);
      let output = '';
      worker.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      await until(async () => output, (text) => text.includes('worker ready') || worker.exitCode !== null, 'the worker starts', 30_000);
    }
    const api = apiClient(server.url);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const created = await api.post('/v1/operations', { agentId: 'assistant', prompt: 'What time is it?' });
      expect(created.status).toBe(201);
      ids.push(created.body.operationId as string);
    }
    for (const id of ids) await until(() => api.get(`/v1/operations/${id}`), (r) => r.body?.status === 'completed', `operation ${id} completes`, 30_000);
    await stop(server);
    for (const worker of workers) {
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.kill('SIGTERM');
      await exited;
    }

    const all = spansIn(spans);
    for (const id of ids) {
      const ofOperation = all.filter((span) => span.attributes['nest_agent_hooks.operation.id'] === id);
      const root = ofOperation.find((span) => span.name === 'invoke_agent assistant' && span.attributes['nest_agent_hooks.operation.resumed'] === undefined);
      expect(root).toBeDefined();
      expect(ofOperation.filter((span) => span.name === 'chat clock')).toHaveLength(2);
      expect(ofOperation.every((span) => span.traceId === root!.traceId)).toBe(true);
    }
    // The steps ran in more than one process (the API process, whose own worker may take jobs too, and the workers).
    const stepPids = new Set(all.filter((span) => span.name === 'chat clock').map((span) => span.pid));
    expect(stepPids.size).toBeGreaterThan(1);
  });
});
