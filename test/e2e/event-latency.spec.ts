/**
 * Issue 13 (DESIGN §4): an event reaches an SSE client in another process soon after the commit. The
 * built server (`agentctl serve`, a child process) serves `GET /v1/operations/:id/events` on PostgreSQL;
 * this test process commits through its own stores on the same database, and the server hears each commit
 * through LISTEN/NOTIFY. The latency — from right after each commit resolved here to the arrival of its SSE
 * event here, one clock — is measured and printed (p50/p99/max) on stderr; only correctness is asserted
 * (every event arrived, in order, and the stream ended at `completed`), never a timing.
 */
import { StoreDatabase } from '../../src/persistence/store-database.js';
import type { DataSource } from 'typeorm';
import { openAgentHooksDataSource } from '../../src/persistence/open-data-source.js';
import { OperationStore } from '../../src/persistence/operation.store.js';
import { OperationWaitStore } from '../../src/persistence/operation-wait.store.js';
import { StepCommitStore } from '../../src/persistence/step-commit.store.js';
import { dropSchema, postgresDatabaseOption, postgresSuite, uniqueSchemaName } from '../integration/persistence/test-databases.js';
import { scratch, type Scratch } from './support/e2e-config.js';
import { ensureBuilt, startServer, type ServerProcess } from './support/server-process.js';
import { readEvents, type SseEvent } from './support/sse.js';

const describeOnPostgres = await postgresSuite('e2e/event-latency.spec.ts', 'the cross-process event latency measurement');

const COMMITS = Number(process.env.EVENT_LATENCY_COMMITS ?? 200);

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

describeOnPostgres('DESIGN §4 events across processes (PostgreSQL LISTEN/NOTIFY → SSE)', () => {
  const schema = uniqueSchemaName();
  const database = postgresDatabaseOption(schema);
  let dir: Scratch;
  let dataSource: DataSource;
  let server: ServerProcess;

  beforeAll(async () => {
    ensureBuilt();
    dir = scratch('event-latency');
    // Migrated here first, so the server finds the schema ready.
    dataSource = await openAgentHooksDataSource(database);
    server = await startServer({ config: dir.config, plugins: dir.plugins, database });
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    if (dataSource?.isInitialized) await dataSource.destroy();
    await dropSchema(schema);
    dir?.remove();
  }, 60_000);

  it(`DESIGN §4 events: ${COMMITS} commits made in this process reach an SSE client of the server process, every one, in order`, async () => {
    const database = new StoreDatabase(dataSource);
    const operations = new OperationStore(database);
    const waits = new OperationWaitStore(database);
    const commits = new StepCommitStore(database);
    // An operation that waits for a human: nothing in the server drives or recovers it meanwhile.
    const { operation } = await operations.create({ agentId: 'approver', prompt: 'measure me' });
    await waits.record(operation.id, [{ toolCallId: 'call-1', stepIndex: 0, callIndex: 0, identifier: 'clock', apiName: 'now', args: {}, kind: 'approval' }]);
    expect(await waits.pause(operation.id)).toBe(true);

    const arrivals = new Map<string, number>();
    const awaited = new Map<string, () => void>();
    let opened!: () => void;
    const streamOpen = new Promise<void>((resolve) => (opened = resolve));
    const onEvent = (event: SseEvent) => {
      const at = performance.now();
      if (event.event === 'status' && event.data.status === 'waiting') opened();
      if (event.event !== 'message' || event.id === undefined) return;
      arrivals.set(event.id, at);
      awaited.get(event.id)?.();
    };
    const response = await fetch(`${server.url}/v1/operations/${operation.id}/events`, { headers: { accept: 'text/event-stream' } });
    expect(response.status).toBe(200);
    const reading = readEvents(response, 120_000, onEvent);
    await streamOpen;

    const latencies: number[] = [];
    let version = (await operations.get(operation.id))!.version;
    for (let i = 0; i < COMMITS; i++) {
      const result = await commits.commit({ operationId: operation.id, expectedVersion: version, messages: [{ role: 'assistant', content: `progress ${i}` }] });
      const committedAt = performance.now();
      version = result.operation.version;
      const id = String(result.messages[0]!.seq);
      if (!arrivals.has(id)) await new Promise<void>((resolve) => awaited.set(id, resolve));
      latencies.push(arrivals.get(id)! - committedAt);
    }
    expect(await operations.complete(operation.id, 'done')).toBe(true);
    const { events, ended } = await reading;

    // Correctness only: every commit's message arrived once, in commit order, and the stream ended at completed.
    const messages = events.filter((event) => event.event === 'message');
    expect(messages.map((event) => event.data.content)).toEqual(['measure me', ...Array.from({ length: COMMITS }, (_, i) => `progress ${i}`)]);
    const seqs = messages.map((event) => Number(event.id));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(events.at(-1)).toMatchObject({ event: 'status', data: { status: 'completed', reason: 'done' } });
    expect(ended).toBe(true);

    const sorted = [...latencies].sort((a, b) => a - b);
    process.stderr.write(
      `\nevent latency, commit (this process) → SSE event (agentctl serve, PostgreSQL LISTEN/NOTIFY), ${COMMITS} commits: ` +
        `p50 ${percentile(sorted, 50).toFixed(2)} ms, p99 ${percentile(sorted, 99).toFixed(2)} ms, max ${sorted.at(-1)!.toFixed(2)} ms\n`,
    );
  }, 120_000);
});
