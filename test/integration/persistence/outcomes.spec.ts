/**
 * The timeline: hook outcome rows (never payloads) stored in order, and the `OutcomeBatcher` that writes
 * them in batches — on size, on a timer, on flush/close — without losing or reordering a record when a
 * write fails. On a SQLite file and on PostgreSQL.
 */
import { StoreDatabase } from '../../../src/persistence/store-database.js';
import { randomUUID } from 'node:crypto';
import type { HookOutcomeRecord } from '../../../src/hooks/hook-outcome.js';
import { HookOutcomeStore } from '../../../src/persistence/hook-outcome.store.js';
import { OutcomeBatcher, type OutcomeWriter } from '../../../src/persistence/outcome-batcher.js';
import type { NewHookOutcome } from '../../../src/persistence/records.js';
import { openAgentHooksDataSource } from '../../../src/persistence/open-data-source.js';
import { driverSuites, useTestDatabase } from './test-databases.js';
import { eventually } from '../../support/eventually.js';

const describeEachDriver = await driverSuites();

const record = (operationId: string | undefined, hookId: string, extra: Partial<HookOutcomeRecord> = {}): HookOutcomeRecord => ({
  ...(operationId ? { operationId } : {}),
  point: 'afterToolCall',
  hookId,
  source: 'caller',
  outcome: 'ok',
  latencyMs: 1.25,
  ...extra,
});

/** Counts the writes a batcher makes, and can be told to fail the next ones. */
class CountingWriter implements OutcomeWriter {
  readonly batches: number[] = [];
  failNext = 0;

  constructor(private readonly store: HookOutcomeStore) {}

  async append(outcomes: readonly NewHookOutcome[]): Promise<void> {
    if (this.failNext > 0) {
      this.failNext -= 1;
      throw new Error('injected: database unavailable');
    }
    this.batches.push(outcomes.length);
    await this.store.append(outcomes);
  }
}

describeEachDriver('hook outcomes on %s', (driver) => {
  const db = useTestDatabase(driver);
  let store: HookOutcomeStore;
  const batchers: OutcomeBatcher[] = [];

  beforeAll(() => {
    store = new HookOutcomeStore(db.handle);
  });

  afterEach(async () => {
    // Leave no timer behind, whatever a test did.
    await Promise.allSettled(batchers.splice(0).map((batcher) => batcher.close()));
  });

  const batcher = (writer: OutcomeWriter, options: ConstructorParameters<typeof OutcomeBatcher>[1] = {}) => {
    const created = new OutcomeBatcher(writer, options);
    batchers.push(created);
    return created;
  };
  const hookIds = async (operationId: string) => (await store.listByOperation(operationId)).map((row) => row.hookId);

  it('stores timeline rows and lists them by operation in seq order, with paging', async () => {
    const operationId = randomUUID();
    const other = randomUUID();
    await store.append([
      { operationId, at: '2030-01-01T00:00:00.000Z', point: 'beforeToolCall', hookId: 'policy', source: 'config', outcome: 'denied', latencyMs: 3.5 },
      { operationId: other, at: '2030-01-01T00:00:00.001Z', point: 'on_run_start', hookId: 'x', source: 'decorator', outcome: 'ok', latencyMs: 0 },
      { operationId, at: '2030-01-01T00:00:00.002Z', point: 'afterToolCall', hookId: 'audit', source: 'environment', outcome: 'error', errorCode: 'timeout', latencyMs: 30000 },
    ]);
    const rows = await store.listByOperation(operationId);
    expect(rows).toEqual([
      { seq: expect.any(Number), operationId, at: '2030-01-01T00:00:00.000Z', point: 'beforeToolCall', hookId: 'policy', source: 'config', outcome: 'denied', latencyMs: 3.5 },
      { seq: expect.any(Number), operationId, at: '2030-01-01T00:00:00.002Z', point: 'afterToolCall', hookId: 'audit', source: 'environment', outcome: 'error', errorCode: 'timeout', latencyMs: 30000 },
    ]);
    expect(rows[0]!.seq).toBeLessThan(rows[1]!.seq);
    expect(await store.listByOperation(operationId, { afterSeq: rows[0]!.seq })).toEqual([rows[1]]);
    expect(await store.listByOperation(operationId, { limit: 1 })).toEqual([rows[0]]);
  });

  it('DESIGN §7: seq counts 1, 2, … within each operation, whatever other operations wrote between', async () => {
    const first = randomUUID();
    const second = randomUUID();
    const row = (operationId: string, hookId: string): NewHookOutcome => ({ operationId, at: '2030-01-01T00:00:00.000Z', point: 'beforeStep', hookId, source: 'caller', outcome: 'ok', latencyMs: 0 });
    await store.append([row(first, 'a'), row(second, 'x'), row(first, 'b')]);
    await store.append([row(second, 'y'), row(first, 'c')]);
    expect((await store.listByOperation(first)).map(({ seq, hookId }) => [seq, hookId])).toEqual([[1, 'a'], [2, 'b'], [3, 'c']]);
    expect((await store.listByOperation(second)).map(({ seq, hookId }) => [seq, hookId])).toEqual([[1, 'x'], [2, 'y']]);
    expect((await store.listByOperation(first, { afterSeq: 1 })).map(({ hookId }) => hookId)).toEqual(['b', 'c']);
  });

  it('DESIGN §7: processes writing one operation at once (own DataSources) number it 1..n without a gap or a duplicate (SQLite: each row numbered under the write lock)', async () => {
    const operationId = randomUUID();
    const others = await Promise.all([0, 1, 2].map(() => openAgentHooksDataSource(db.option, { migrate: false })));
    try {
      const stores = [store, ...others.map((source) => new HookOutcomeStore(new StoreDatabase(source)))];
      const row = (hookId: string): NewHookOutcome => ({ operationId, at: '2030-01-01T00:00:00.000Z', point: 'afterToolCall', hookId, source: 'caller', outcome: 'ok', latencyMs: 0 });
      await Promise.all(stores.flatMap((writer, w) => Array.from({ length: 5 }, (_, b) => writer.append([row(`${w}-${b}-0`), row(`${w}-${b}-1`)]))));
      const seqs = (await store.listByOperation(operationId)).map(({ seq }) => seq);
      expect(seqs).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    } finally {
      await Promise.all(others.map((source) => source.destroy()));
    }
  });

  it('keeps no payload: the table has exactly the timeline columns', async () => {
    const columns = (await db.dataSource.createQueryRunner().getTable(db.schema ? `${db.schema}.agent_hooks_hook_outcomes` : 'agent_hooks_hook_outcomes'))!
      .columns.map((column) => column.name)
      .sort();
    expect(columns).toEqual(['at', 'error_code', 'hook_id', 'latency_ms', 'operation_id', 'operation_seq', 'outcome', 'point', 'seq', 'source', 'tool_call_id']);
  });

  it('F1: a tool point\'s row keeps its call id (never the key), through the batcher and a direct append', async () => {
    const operationId = randomUUID();
    const writer = new CountingWriter(store);
    const outcomes = batcher(writer, { maxBatch: 100, flushIntervalMs: 60_000 });
    outcomes.record(record(operationId, 'keyed', { point: 'beforeToolCall', toolCallId: 'call-7' }));
    outcomes.record(record(operationId, 'plain', { point: 'beforeStep' }));
    await outcomes.flush();
    await store.append([{ operationId, at: '2030-01-01T00:00:00.000Z', point: 'on_tool_error', hookId: 'direct', source: 'decorator', outcome: 'ok', latencyMs: 0, toolCallId: 'call-8' }]);
    expect((await store.listByOperation(operationId)).map(({ hookId, toolCallId }) => ({ hookId, toolCallId }))).toEqual([
      { hookId: 'keyed', toolCallId: 'call-7' },
      { hookId: 'plain', toolCallId: undefined },
      { hookId: 'direct', toolCallId: 'call-8' },
    ]);
    expect((await store.listByOperation(operationId))[1]).not.toHaveProperty('toolCallId');
  });

  it('batches: a write starts as soon as maxBatch records are buffered', async () => {
    const operationId = randomUUID();
    const writer = new CountingWriter(store);
    const outcomes = batcher(writer, { maxBatch: 3, flushIntervalMs: 60_000 });
    outcomes.record(record(operationId, 'a'));
    outcomes.record(record(operationId, 'b'));
    // A write would start on a microtask; by the next macrotask it would have begun. Below maxBatch, none did.
    await new Promise((resolve) => setImmediate(resolve));
    expect(writer.batches).toEqual([]);
    expect(outcomes.pending).toBe(2);
    outcomes.record(record(operationId, 'c'));
    await eventually(async () => (await hookIds(operationId)).length === 3, '(await hookIds(operationId)).length === 3');
    expect(writer.batches).toEqual([3]);
    expect(await hookIds(operationId)).toEqual(['a', 'b', 'c']);
  });

  it('batches: a timer writes a partial batch flushIntervalMs after its first record', async () => {
    const operationId = randomUUID();
    const writer = new CountingWriter(store);
    const outcomes = batcher(writer, { maxBatch: 100, flushIntervalMs: 40 });
    outcomes.record(record(operationId, 'a', { outcome: 'mocked' }));
    outcomes.record(record(operationId, 'b', { outcome: 'allowed' }));
    expect(outcomes.pending).toBe(2);
    await eventually(async () => (await hookIds(operationId)).length === 2, '(await hookIds(operationId)).length === 2');
    expect(writer.batches).toEqual([2]);
    expect(outcomes.pending).toBe(0);
  });

  it('batches: close() writes what is buffered; flush() with nothing buffered writes nothing', async () => {
    const operationId = randomUUID();
    const writer = new CountingWriter(store);
    const outcomes = batcher(writer, { maxBatch: 100, flushIntervalMs: 60_000 });
    await outcomes.flush();
    expect(writer.batches).toEqual([]);
    outcomes.record(record(operationId, 'a'));
    outcomes.record(record(operationId, 'b', { outcome: 'notification', errorCode: undefined }));
    await outcomes.close();
    expect(writer.batches).toEqual([2]);
    expect(await hookIds(operationId)).toEqual(['a', 'b']);
  });

  it('keeps the recorded order across many batches and interleaved operations', async () => {
    const first = randomUUID();
    const second = randomUUID();
    const writer = new CountingWriter(store);
    const outcomes = batcher(writer, { maxBatch: 7, flushIntervalMs: 5 });
    const expected: Record<string, string[]> = { [first]: [], [second]: [] };
    for (let i = 0; i < 120; i += 1) {
      const operationId = i % 3 === 0 ? second : first;
      expected[operationId]!.push(`h${i}`);
      outcomes.record(record(operationId, `h${i}`));
      if (i % 25 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await outcomes.flush();
    expect(await hookIds(first)).toEqual(expected[first]);
    expect(await hookIds(second)).toEqual(expected[second]);
    expect(writer.batches.every((size) => size <= 7)).toBe(true);
    expect(writer.batches.reduce((sum, size) => sum + size, 0)).toBe(120);
  });

  it('loses nothing when writes fail: flush rejects, the records stay buffered, and a later flush writes them once, in order', async () => {
    const operationId = randomUUID();
    const writer = new CountingWriter(store);
    const errors: unknown[] = [];
    const outcomes = batcher(writer, { maxBatch: 2, flushIntervalMs: 60_000, retryDelayMs: 60_000, onError: (error) => errors.push(error) });
    writer.failNext = 100; // the size trigger's background write fails too
    for (const id of ['a', 'b', 'c', 'd', 'e']) outcomes.record(record(operationId, id));
    await expect(outcomes.flush()).rejects.toThrow('injected');
    expect(outcomes.pending).toBe(5);
    expect(await hookIds(operationId)).toEqual([]);
    outcomes.record(record(operationId, 'f'));
    writer.failNext = 0;
    await outcomes.flush();
    expect(outcomes.pending).toBe(0);
    expect(await hookIds(operationId)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    // The background write the size trigger started failed and was reported; the explicit flush's was thrown.
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(errors.every((error) => String(error).includes('injected'))).toBe(true);
  });

  it('writeWith: the work runs after the writes before it with what is buffered; a failed work puts it back in front, written once later', async () => {
    const operationId = randomUUID();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    /** A slow first write (a batch on its way to the database) that the next work must wait for. */
    const writer: OutcomeWriter = {
      append: async (outcomes) => {
        await held;
        await store.append(outcomes);
      },
    };
    const outcomes = batcher(writer, { maxBatch: 100, flushIntervalMs: 60_000, retryDelayMs: 60_000 });
    outcomes.record(record(operationId, 'a'));
    const first = outcomes.flush();
    const waited = outcomes.writeWith(async (records) => ({ records: records.length, stored: await hookIds(operationId) }));
    release();
    await first;
    // It ran only after the slow write landed: nothing it writes can come before what was recorded earlier.
    await expect(waited).resolves.toEqual({ records: 0, stored: ['a'] });

    outcomes.record(record(operationId, 'b'));
    outcomes.record(record(operationId, 'c'));
    const seen: string[][] = [];
    await expect(
      outcomes.writeWith(async (records) => {
        seen.push(records.map((r) => r.hookId));
        throw new Error('injected: commit refused');
      }),
    ).rejects.toThrow('injected');
    expect(outcomes.pending).toBe(2);
    outcomes.record(record(operationId, 'd'));
    // Back in front of what came after.
    await outcomes.writeWith(async (records) => {
      seen.push(records.map((r) => r.hookId));
      await store.append(records);
    });
    expect(seen).toEqual([
      ['b', 'c'],
      ['b', 'c', 'd'],
    ]);
    await outcomes.flush();
    expect(await hookIds(operationId)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('writeWith: after it (written or refused), what is buffered still reaches the database by the timer, also after a failed background write', async () => {
    const operationId = randomUUID();
    const writer = new CountingWriter(store);
    const outcomes = batcher(writer, { maxBatch: 100, flushIntervalMs: 5, retryDelayMs: 10, onError: () => undefined });
    // A background write fails: the batcher backs off, its retry timer owns the next write.
    writer.failNext = 1;
    outcomes.record(record(operationId, 'a'));
    await eventually(() => writer.failNext === 0, 'writer.failNext === 0');
    // A commit takes the buffer over and succeeds; a record after it is written without another commit.
    await outcomes.writeWith(async (records) => store.append(records));
    outcomes.record(record(operationId, 'b'));
    await eventually(async () => (await hookIds(operationId)).length === 2, '(await hookIds(operationId)).length === 2');
    // A refused commit: its records go back and the timer writes them.
    outcomes.record(record(operationId, 'c'));
    await expect(outcomes.writeWith(async () => Promise.reject(new Error('injected: stale version')))).rejects.toThrow('injected');
    await eventually(async () => (await hookIds(operationId)).length === 3, '(await hookIds(operationId)).length === 3');
    expect(await hookIds(operationId)).toEqual(['a', 'b', 'c']);
    expect(outcomes.pending).toBe(0);
  });

  it('writeWith: more than maxBatch buffered — the oldest are written first in batches, the work gets at most maxBatch', async () => {
    const operationId = randomUUID();
    const writer = new CountingWriter(store);
    const outcomes = batcher(writer, { maxBatch: 3, flushIntervalMs: 60_000 });
    writer.failNext = 100; // the size trigger's background writes fail: everything stays buffered
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) outcomes.record(record(operationId, id));
    await eventually(() => outcomes.pending === 7 && writer.batches.length === 0, 'outcomes.pending === 7 && writer.batches.length === 0');
    writer.failNext = 0;
    let given: string[] = [];
    await outcomes.writeWith(async (records) => {
      given = records.map((r) => r.hookId);
      await store.append(records);
    });
    expect(given).toEqual(['g']);
    expect(writer.batches).toEqual([3, 3]);
    expect(await hookIds(operationId)).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
  });

  it('retries a failed background write by itself, reporting the failure', async () => {
    const operationId = randomUUID();
    const writer = new CountingWriter(store);
    const errors: unknown[] = [];
    const outcomes = batcher(writer, { maxBatch: 100, flushIntervalMs: 5, retryDelayMs: 10, onError: (error) => errors.push(error) });
    writer.failNext = 2;
    outcomes.record(record(operationId, 'a'));
    outcomes.record(record(operationId, 'b'));
    await eventually(async () => (await hookIds(operationId)).length === 2, '(await hookIds(operationId)).length === 2');
    expect(await hookIds(operationId)).toEqual(['a', 'b']);
    expect(errors).toHaveLength(2);
    expect(String(errors[0])).toContain('injected');
  });

  it('keeps only records that belong to an operation, and never throws from record()', async () => {
    const operationId = randomUUID();
    const writer = new CountingWriter(store);
    const outcomes = batcher(writer, { maxBatch: 100, flushIntervalMs: 60_000 });
    expect(() => outcomes.record(record(undefined, 'outside-any-run', { point: 'before_mcp_request' }))).not.toThrow();
    outcomes.record(record(operationId, 'inside'));
    expect(outcomes.pending).toBe(1);
    await outcomes.flush();
    expect(await hookIds(operationId)).toEqual(['inside']);
  });
});
