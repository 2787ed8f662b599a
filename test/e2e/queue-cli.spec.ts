/**
 * DESIGN §4/§9 queue mode from the command line, on the real PostgreSQL and Redis (DESIGN §11: a missing
 * service fails under CI=true, elsewhere the file is skipped loudly): `agentctl serve --mode queue` answers
 * /readyz (database and Redis) and completes an operation through step jobs; `agentctl worker` starts,
 * prints `worker ready`, and exits 0 on SIGTERM. Own schema and own BullMQ prefix.
 */
import { jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { openAgentHooksDataSource } from '../../src/persistence/open-data-source.js';
import { postgresDatabaseOption, uniqueSchemaName } from '../integration/persistence/test-databases.js';
import { dropPrefix, queueSuite, REDIS_URL, uniquePrefix } from '../integration/queue/queue-kit.js';
import { apiClient, until } from './support/http-client.js';
import { scratch, type Scratch } from './support/e2e-config.js';
import { ensureBuilt, startServer, type ServerProcess } from './support/server-process.js';

// Each test spawns the built CLI or server (a few seconds each on a busy 2-core machine).
jest.setTimeout(120_000);

// Probed at collection time: without PostgreSQL or Redis the tests show as skipped (a failure under CI=true).
const describeWithServices = await queueSuite('e2e/queue-cli.spec.ts', 'the queue-mode CLI (serve --mode queue, worker)');

describeWithServices('agentctl serve --mode queue and agentctl worker', () => {
  const schema = uniqueSchemaName();
  const database = postgresDatabaseOption(schema);
  const prefix = uniquePrefix();
  let files: Scratch;
  let server: ServerProcess | undefined;

  beforeAll(() => {
    ensureBuilt();
    files = scratch('queue-cli');
  });

  afterAll(async () => {
    await server?.stop();
    await dropPrefix(prefix);
    const dataSource = await openAgentHooksDataSource(database, { migrate: false });
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await dataSource.destroy();
    files.remove();
  });

  it('serve --mode queue: /readyz checks the database and Redis; an operation completes through step jobs; SIGTERM exits 0', async () => {
    server = await startServer({ config: files.config, plugins: files.plugins, database, args: ['--mode', 'queue', '--redis', REDIS_URL, '--queue-prefix', prefix] });
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    const api = apiClient(server.url);
    const created = await api.post('/v1/operations', { agentId: 'assistant', prompt: 'What time is it?' });
    expect(created.status).toBe(201);
    const done = await until(() => api.get(`/v1/operations/${created.body.operationId}`), (r) => r.body.status === 'completed', 'operation completes', 30_000);
    expect(done.body.reason).toBe('done');
    expect(await server.stop()).toBe(0);
    server = undefined;
  });

  it('worker: prints "worker ready", then exits 0 on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      ['dist/cli/agentctl.js', 'worker', '--config', files.config, '--plugins', files.plugins, '--database', database, '--redis', REDIS_URL, '--queue-prefix', prefix, '--concurrency', '2'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      await until(async () => output, (text) => text.includes('worker ready') || child.exitCode !== null, 'worker starts', 30_000);
      expect(output).toContain('worker ready');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
