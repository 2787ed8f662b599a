/**
 * SPEC G2 / issue 14 item 5: the lease's one statement stands in for the step's read, so what it answers
 * must be what a read answers. On a SQLite file and on PostgreSQL: the operation `acquire` returns equals
 * `operations.get` (JSON columns, nulls, numbers), and on PostgreSQL its conversation equals the messages
 * read on their own; with the cached state unchanged no row comes back, and a message appended without a
 * version bump (a deferred result) brings the row and the new conversation back. A lease taken while
 * another holds it is refused; one of a completed operation too.
 */
import { createRuntimeStores, type RuntimeStores } from '../../../src/persistence/runtime-stores.js';
import { driverSuites, useTestDatabase } from './test-databases.js';

const describeEachDriver = await driverSuites();

describeEachDriver('G2 the lease answers the operation as a read would, on %s', (driver) => {
  const db = useTestDatabase(driver);
  let stores: RuntimeStores;

  beforeAll(() => {
    stores = createRuntimeStores(db.dataSource);
  });

  afterAll(async () => {
    await stores.timeline.close();
  });

  const TTL = 30_000;
  const create = async (withHooks: boolean) =>
    (
      await stores.operations.create({
        agentId: 'lease-agent',
        prompt: 'héllo ✓',
        ownerId: 'lease-owner',
        ...(withHooks ? { callerHooks: [{ hookId: 'audit', type: 'afterToolCall', webhook: { url: 'https://hooks.example.com/a' } } as never] } : {}),
      })
    ).operation;

  it('G2: the operation the lease returns deep-equals operations.get; on PostgreSQL so do its messages and the caller-hook flag', async () => {
    const operation = await create(true);
    await stores.messages.append(operation.id, [{ role: 'assistant', content: 'thinking', toolCalls: [{ id: 'c1', identifier: 'fs', apiName: 'read', args: { path: '/tmp/a', n: 1.5 } }] } as never]);
    const lease = await stores.leases.acquire(operation.id, 'holder-1', TTL);
    expect(lease).not.toBeNull();
    expect(lease!.operation).toEqual(await stores.operations.get(operation.id));
    expect(lease!.operation!.leaseOwner).toBe('holder-1');
    const messages = await stores.messages.list(operation.id);
    expect(lease!.messageSeq).toBe(messages.at(-1)!.seq);
    if (driver === 'postgres') {
      expect(lease!.messages).toEqual(messages);
      expect(lease!.hasCallerHooks).toBe(true);
    }
    // Held: another holder is refused until it is let go.
    expect(await stores.leases.acquire(operation.id, 'holder-2', TTL)).toBeNull();
    expect(await stores.leases.letGo(operation.id, 'holder-1')).toMatchObject({ version: operation.version, status: 'running' });
    expect(await stores.leases.acquire(operation.id, 'holder-2', TTL)).not.toBeNull();
  });

  it('G2: with the state known and unchanged no row comes back (PostgreSQL); a message appended without a version bump brings row and conversation back', async () => {
    const operation = await create(false);
    const first = await stores.leases.acquire(operation.id, 'holder-a', TTL);
    if (driver === 'postgres') expect(first!.hasCallerHooks).toBe(false);
    await stores.leases.letGo(operation.id, 'holder-a');
    const known = { version: first!.version, status: first!.status, messageSeq: first!.messageSeq };
    const unchanged = await stores.leases.acquire(operation.id, 'holder-b', TTL, known);
    if (driver === 'postgres') expect(unchanged!.operation).toBeUndefined();
    expect(unchanged).toMatchObject(known);
    await stores.leases.letGo(operation.id, 'holder-b');

    // A deferred result, say: a message without a version bump.
    await stores.messages.append(operation.id, [{ role: 'tool', toolCallId: 'late', content: 'late result' } as never]);
    const moved = await stores.leases.acquire(operation.id, 'holder-c', TTL, known);
    expect(moved!.version).toBe(known.version);
    expect(moved!.messageSeq).toBe(known.messageSeq + 1);
    expect(moved!.operation).toEqual(await stores.operations.get(operation.id));
    if (driver === 'postgres') expect(moved!.messages!.map((m) => m.content)).toEqual((await stores.messages.list(operation.id)).map((m) => m.content));
    await stores.leases.letGo(operation.id, 'holder-c');
  });

  it('G2: a completed operation gives no lease', async () => {
    const operation = await create(false);
    await stores.operations.complete(operation.id, 'interrupted');
    expect(await stores.leases.acquire(operation.id, 'holder-x', TTL)).toBeNull();
  });
});
