/**
 * DESIGN §7 `GET /v1/operations` at the read port (`OPERATION_READER.listOperations`): one owner's
 * operations newest first by (createdAt, id), filtered by status and agent, a keyset page at a time — the
 * pages visit every operation exactly once while others are inserted between reads. On a SQLite file and
 * on PostgreSQL.
 */
import { OperationStore } from '../../../src/persistence/operation.store.js';
import { createRuntimeStores, type RuntimeStores } from '../../../src/persistence/runtime-stores.js';
import { SqlOperationReads } from '../../../src/persistence/sql-operation-reads.js';
import type { OperationListQuery, OperationReadPort, OperationSummary } from '../../../src/runtime/operation-read.port.js';
import { driverSuites, runtimeDatabaseOver, useTestDatabase } from './test-databases.js';

const describeEachDriver = await driverSuites();


/** The list order: createdAt, then id, both descending. */
const newestFirst = (a: OperationSummary, b: OperationSummary): number =>
  a.createdAt === b.createdAt ? (a.id < b.id ? 1 : a.id > b.id ? -1 : 0) : a.createdAt < b.createdAt ? 1 : -1;

describeEachDriver('DESIGN §7 list at the read port on %s', (driver) => {
  const db = useTestDatabase(driver);
  let stores: RuntimeStores;
  let reads: OperationReadPort;

  beforeAll(() => {
    stores = createRuntimeStores(db.dataSource);
    reads = new SqlOperationReads(runtimeDatabaseOver(stores));
  });

  afterAll(async () => {
    await stores.timeline.close();
  });

  /** Creates an operation stamped `at` (several may share one millisecond: the id breaks the tie). */
  const createAt = async (at: string, input: { ownerId?: string; agentId?: string }) => {
    const store = new OperationStore(stores.database, { clock: () => new Date(at) });
    return (await store.create({ agentId: input.agentId ?? 'support', prompt: 'hi', ...(input.ownerId !== undefined ? { ownerId: input.ownerId } : {}) })).operation;
  };

  /** Every page of `query` until the last, with `between` run after each page read. */
  const allPages = async (query: Omit<OperationListQuery, 'after'>, between: () => Promise<void> = async () => {}) => {
    const seen: OperationSummary[] = [];
    let after: OperationListQuery['after'];
    for (;;) {
      const page = await reads.listOperations({ ...query, ...(after ? { after } : {}) });
      seen.push(...page);
      if (page.length < query.limit) return seen;
      const last = page.at(-1)!;
      after = { createdAt: last.createdAt, id: last.id };
      await between();
    }
  };

  it("answers one owner's operations only, newest first, ties in one millisecond broken by id", async () => {
    const owner = 'order-owner';
    const same = '2026-01-02T03:04:05.006Z';
    await createAt('2026-01-01T00:00:00.000Z', { ownerId: owner });
    await Promise.all([1, 2, 3].map(() => createAt(same, { ownerId: owner })));
    await createAt('2026-01-03T00:00:00.000Z', { ownerId: owner });
    await createAt('2026-01-04T00:00:00.000Z', { ownerId: 'someone-else' });
    await createAt('2026-01-05T00:00:00.000Z', {});

    const listed = await reads.listOperations({ ownerId: owner, limit: 100 });
    expect(listed).toHaveLength(5);
    expect(listed.every((row) => row.ownerId === owner)).toBe(true);
    expect(listed).toEqual([...listed].sort(newestFirst));
    expect(listed.map((row) => row.createdAt)).toEqual(['2026-01-03T00:00:00.000Z', same, same, same, '2026-01-01T00:00:00.000Z']);
    // A page boundary inside the tie still visits each of them once.
    const paged = await allPages({ ownerId: owner, limit: 2 });
    expect(paged.map((row) => row.id)).toEqual(listed.map((row) => row.id));
  });

  it('answers the summary fields: steps, usage, status, reason, timestamps', async () => {
    const { operation } = await stores.operations.create({ agentId: 'summary-agent', ownerId: 'summary-owner', prompt: 'hi' });
    await stores.commits.commit({ operationId: operation.id, expectedVersion: operation.version, patch: { stepIndex: 2, usage: { inputTokens: 11, outputTokens: 7, costUsd: 0.25 } } });
    await stores.operations.complete(operation.id, 'done');
    const [row] = await reads.listOperations({ ownerId: 'summary-owner', limit: 10 });
    expect(row).toEqual({
      id: operation.id,
      agentId: 'summary-agent',
      ownerId: 'summary-owner',
      status: 'completed',
      reason: 'done',
      steps: 2,
      usage: { inputTokens: 11, outputTokens: 7, costUsd: 0.25 },
      createdAt: operation.createdAt,
      updatedAt: expect.any(String),
    });
    expect(row!.updatedAt >= row!.createdAt).toBe(true);
  });

  it('filters by status and by agent, together with the owner', async () => {
    const owner = 'filter-owner';
    const a = (await stores.operations.create({ agentId: 'alpha', ownerId: owner, prompt: 'a' })).operation;
    const b = (await stores.operations.create({ agentId: 'beta', ownerId: owner, prompt: 'b' })).operation;
    const c = (await stores.operations.create({ agentId: 'alpha', ownerId: owner, prompt: 'c' })).operation;
    await stores.operations.create({ agentId: 'alpha', ownerId: 'filter-other', prompt: 'd' });
    await stores.operations.complete(c.id, 'interrupted');

    const ids = async (query: Omit<OperationListQuery, 'limit'>) => (await reads.listOperations({ ...query, limit: 50 })).map((row) => row.id).sort();
    expect(await ids({ ownerId: owner, agentId: 'alpha' })).toEqual([a.id, c.id].sort());
    expect(await ids({ ownerId: owner, status: 'running' })).toEqual([a.id, b.id].sort());
    expect(await ids({ ownerId: owner, status: 'completed', agentId: 'alpha' })).toEqual([c.id]);
    expect(await ids({ ownerId: owner, status: 'waiting' })).toEqual([]);
  });

  it('DESIGN §7 /v1/events: `ids` reads just those operations, still only the owner\'s, in one statement', async () => {
    const owner = 'ids-owner';
    const a = (await stores.operations.create({ agentId: 'ids', ownerId: owner, prompt: 'a' })).operation;
    const b = (await stores.operations.create({ agentId: 'ids', ownerId: owner, prompt: 'b' })).operation;
    await stores.operations.create({ agentId: 'ids', ownerId: owner, prompt: 'not asked for' });
    const foreign = (await stores.operations.create({ agentId: 'ids', ownerId: 'ids-other', prompt: 'c' })).operation;
    const asked = [a.id, b.id, foreign.id, '00000000-0000-4000-8000-000000000000'];
    const rows = await reads.listOperations({ ownerId: owner, ids: asked, limit: asked.length });
    expect(rows.map((row) => row.id).sort()).toEqual([a.id, b.id].sort());
    expect(await reads.listOperations({ ownerId: owner, ids: [], limit: 1 })).toEqual([]);
  });

  it('pages visit every operation exactly once while operations are inserted between page reads', async () => {
    const owner = 'paging-owner';
    const before: string[] = [];
    for (let i = 0; i < 23; i++) before.push((await stores.operations.create({ agentId: 'pager', ownerId: owner, prompt: `p${i}` })).operation.id);
    const insertedMeanwhile: Promise<unknown>[] = [];
    const seen = await allPages({ ownerId: owner, limit: 4 }, async () => {
      // Newer rows of this owner and of another owner arrive while the caller pages: left running, so
      // they race the next page's read.
      insertedMeanwhile.push(
        stores.operations.create({ agentId: 'pager', ownerId: owner, prompt: 'new' }),
        stores.operations.create({ agentId: 'pager', ownerId: 'paging-other', prompt: 'other' }),
      );
    });
    await Promise.all(insertedMeanwhile);
    const ids = seen.map((row) => row.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => before.includes(id)).sort()).toEqual([...before].sort());
    expect(seen.every((row) => row.ownerId === owner)).toBe(true);
    expect(seen).toEqual([...seen].sort(newestFirst));
    expect(insertedMeanwhile.length).toBeGreaterThan(8);
  });

  it('without an owner (the keyless loopback server) answers every operation', async () => {
    const ownerless = await createAt('2030-01-01T00:00:00.000Z', {});
    const owned = await createAt('2030-01-01T00:00:00.001Z', { ownerId: 'x' });
    const [first, second] = await reads.listOperations({ limit: 2 });
    expect([first!.id, second!.id]).toEqual([owned.id, ownerless.id]);
  });
});
