/**
 * SPEC G2 / issue 14 item 5: the lease's one statement stands in for the step's read, so what it answers
 * must be what a read answers. On a SQLite file and on PostgreSQL: the operation `acquire` returns equals
 * `operations.get` (JSON columns, nulls, numbers), and on PostgreSQL its conversation equals the messages
 * read on their own; with the cached state unchanged no row comes back, and a message appended without a
 * version bump (a deferred result) brings the row and the new conversation back. A lease taken while
 * another holds it is refused; one of a completed operation too. A worker whose cached state is stale (a
 * step ran on another worker since) gets only the messages after the ones it has, and keeps the conversation
 * a fresh read returns.
 */
import type { NewMessage } from '../../../src/persistence/records.js';
import { createRuntimeStores, type RuntimeStores } from '../../../src/persistence/runtime-stores.js';
import { StepStateStore } from '../../../src/persistence/step-state.store.js';
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
    // Of the conversation only what follows the known counter.
    if (driver === 'postgres') {
      expect(moved!.messagesAfter).toBe(known.messageSeq);
      expect(moved!.messages!.map((m) => m.content)).toEqual(['late result']);
    }
    await stores.leases.letGo(operation.id, 'holder-c');
  });

  /** The SQL text of every statement `work` sends (PostgreSQL: the pool plain SQL goes to; SQLite: TypeORM's query log and `StoreDatabase.query`). */
  async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
    const sent: string[] = [];
    const target = (driver === 'postgres' ? (db.dataSource.driver as unknown as { master: object }).master : db.dataSource.logger) as Record<string, unknown>;
    const name = driver === 'postgres' ? 'query' : 'logQuery';
    const own = Object.prototype.hasOwnProperty.call(target, name);
    const original = target[name] as (...args: unknown[]) => unknown;
    target[name] = function recorded(this: unknown, ...args: unknown[]) {
      sent.push(String(args[0]));
      return original.apply(this, args);
    };
    // SQLite: a statement outside a transaction runs on better-sqlite3's own handle (`StoreDatabase.query`), not through TypeORM.
    const database = stores.database;
    const query = database.query;
    if (driver !== 'postgres') {
      database.query = function recorded(this: typeof database, sql: string, params: readonly unknown[]) {
        sent.push(sql);
        return query.call(this, sql, params);
      };
    }
    try {
      await work();
    } finally {
      if (own) target[name] = original;
      else delete target[name];
      database.query = query;
    }
    return sent;
  }

  it('issue 14: a worker whose cached state is stale gets only the tail of the conversation, and ends with what a fresh read returns', async () => {
    const { id } = await create(false);
    const workerA = new StepStateStore(stores.database);
    const workerB = new StepStateStore(stores.database);
    /** One step of `states`'s worker, as the runtime takes it: the lease (told what is cached), the step's read, its commit, the release. */
    const step = async (states: StepStateStore, owner: string, messages: NewMessage[]) => {
      const lease = await stores.leases.acquire(id, owner, TTL, states.knownState(id));
      expect(lease?.operation).toBeDefined(); // the step before ran on the other worker
      const sent = await statementsOf(async () => {
        states.leased(lease!.operation!, lease!.messageSeq, owner, lease!.messages, lease!.messagesAfter);
        return states.read(id, owner);
      });
      const begun = await states.read(id, owner);
      expect(begun).toEqual(await new StepStateStore(stores.database).read(id));
      const expectedVersion = begun!.operation.version;
      const base = states.known(id, expectedVersion);
      const result = await stores.commits.commit({ operationId: id, expectedVersion, messages, patch: { stepIndex: begun!.operation.stepIndex + 1 }, leaseOwner: owner, ...(base ? { base } : {}) });
      states.committed(id, expectedVersion, result, owner);
      await stores.leases.letGo(id, owner);
      return { lease: lease!, sent };
    };
    const call = (n: number) => ({ role: 'assistant', content: '', toolCalls: [{ id: `c${n}`, identifier: 'clock', apiName: 'now', args: { n } }] }) as NewMessage;
    const result = (n: number) => ({ role: 'tool', content: `noon ${n}`, toolCallId: `c${n}`, identifier: 'clock', apiName: 'now', success: true }) as NewMessage;

    await step(workerA, 'a-1', [call(1)]);
    await step(workerB, 'b-1', [result(1)]);
    await stores.messages.append(id, [{ role: 'user', content: 'and one more ✓' } as NewMessage]); // a message without a version bump
    const known = workerA.knownState(id)!;
    expect(known.messageSeq).toBe(2);
    const { lease, sent } = await step(workerA, 'a-2', [call(2)]);

    const conversation = await stores.messages.list(id);
    if (driver === 'postgres') {
      // The lease's statement brought the messages after the ones worker A had, and the step's read sent nothing.
      expect(lease.messagesAfter).toBe(2);
      expect(lease.messages!.map((m) => m.seq)).toEqual([3, 4]);
      expect(sent).toEqual([]);
    } else {
      // The step's read asked for the messages after the ones worker A had, not for the whole conversation.
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatch(/"seq" > \$2/);
    }
    // Worker A's cache is the conversation as committed: its next step begins from it unread.
    expect((await workerA.read(id, 'a-2'))!.messages).toEqual(conversation);
    expect(conversation.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(await statementsOf(() => workerA.read(id, 'a-2'))).toEqual([]);
  });

  it('G2: an operation created with its creator\'s lease is held from its INSERT on: another holder is refused, the creator\'s own steps are not', async () => {
    const before = Date.now();
    const { operation } = await stores.operations.create({ agentId: 'lease-agent', prompt: 'hi', lease: { owner: 'creator', ttlMs: TTL } });
    const stored = await stores.operations.get(operation.id);
    expect(stored!.leaseOwner).toBe('creator');
    expect(Date.parse(stored!.leaseUntil!)).toBeGreaterThanOrEqual(before + TTL - 1_000);
    expect(await stores.leases.acquire(operation.id, 'someone-else', TTL)).toBeNull();
    // The creator's own step commits are fenced by the same owner and go through.
    const renewed = await stores.leases.renew(operation.id, 'creator', TTL);
    expect(renewed).not.toBeNull();
    expect(await stores.leases.letGo(operation.id, 'creator')).toMatchObject({ version: operation.version, status: 'running' });
    expect(await stores.leases.acquire(operation.id, 'someone-else', TTL)).not.toBeNull();
  });

  it('G2: a completed operation gives no lease', async () => {
    const operation = await create(false);
    await stores.operations.complete(operation.id, 'interrupted');
    expect(await stores.leases.acquire(operation.id, 'holder-x', TTL)).toBeNull();
  });
});
