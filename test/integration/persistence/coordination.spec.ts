/**
 * Writes that must happen once, whoever tries (DESIGN §4): deferred-result placeholders (L4), leases, and
 * intervention decisions and claims — each a compare-and-set, checked under concurrent attempts on a
 * SQLite file and on PostgreSQL.
 */
import { StoreDatabase } from '../../../src/persistence/store-database.js';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { openAgentHooksDataSource } from '../../../src/persistence/open-data-source.js';
import { InterventionStore } from '../../../src/persistence/intervention.store.js';
import { OperationLeaseStore } from '../../../src/persistence/operation-lease.store.js';
import { OperationStore, TERMINAL_HOOKS_LEASE_MS, TERMINAL_HOOKS_OWNER } from '../../../src/persistence/operation.store.js';
import type { NewIntervention } from '../../../src/persistence/records.js';
import { ToolResultPlaceholderStore } from '../../../src/persistence/tool-result-placeholder.store.js';
import { driverSuites, useTestDatabase } from './test-databases.js';

const describeEachDriver = await driverSuites();

describeEachDriver('coordination on %s', (driver) => {
  const db = useTestDatabase(driver);
  let now = new Date('2030-01-01T00:00:00.000Z');
  const clock = () => now;
  let operations: OperationStore;
  let placeholders: ToolResultPlaceholderStore;
  let leases: OperationLeaseStore;
  let interventions: InterventionStore;

  beforeAll(() => {
    operations = new OperationStore(db.handle, { clock });
    placeholders = new ToolResultPlaceholderStore(db.handle, { clock });
    leases = new OperationLeaseStore(db.handle, { clock });
    interventions = new InterventionStore(db.handle, { clock });
  });

  const newOperation = async () => (await operations.create({ agentId: 'a', prompt: 'go' })).operation;

  describe('tool-result placeholders', () => {
    it('are created empty once, and read back', async () => {
      const operation = await newOperation();
      expect(await placeholders.createEmpty(operation.id, 'call-1')).toBe(true);
      expect(await placeholders.createEmpty(operation.id, 'call-1')).toBe(false);
      expect(await placeholders.get(operation.id, 'call-1')).toEqual({
        operationId: operation.id,
        toolCallId: 'call-1',
        state: 'empty',
        createdAt: now.toISOString(),
      });
      expect(await placeholders.get(operation.id, 'nope')).toBeNull();
    });

    it('go empty → final exactly once: the first of many concurrent writers wins and its result is kept', async () => {
      const operation = await newOperation();
      await placeholders.createEmpty(operation.id, 'call-1');
      const results = Array.from({ length: 10 }, (_, i) => ({ content: `result ${i}`, success: i % 2 === 0, data: { i } }));
      const wins = await Promise.all(results.map((result) => placeholders.finalize(operation.id, 'call-1', result)));
      expect(wins.filter(Boolean)).toHaveLength(1);
      const stored = await placeholders.get(operation.id, 'call-1');
      expect(stored).toMatchObject({ state: 'final', result: results[wins.indexOf(true)], finalizedAt: now.toISOString() });
      expect(await placeholders.finalize(operation.id, 'call-1', { content: 'late', success: true })).toBe(false);
      expect((await placeholders.get(operation.id, 'call-1'))!.result).toEqual(results[wins.indexOf(true)]);
    });

    it('cannot be finalized when there is none, and list per operation', async () => {
      const operation = await newOperation();
      expect(await placeholders.finalize(operation.id, 'missing', { content: 'x', success: true })).toBe(false);
      await placeholders.createEmpty(operation.id, 'b');
      await placeholders.createEmpty(operation.id, 'a');
      expect((await placeholders.list(operation.id)).map((p) => p.toolCallId)).toEqual(['a', 'b']);
    });
  });

  describe('leases', () => {
    it('go to exactly one of many workers racing for them', async () => {
      const operation = await newOperation();
      const attempts = await Promise.all(Array.from({ length: 8 }, (_, i) => leases.acquire(operation.id, `worker-${i}`, 30_000)));
      const holders = attempts.filter((lease) => lease !== null);
      expect(holders).toHaveLength(1);
      const stored = (await operations.get(operation.id))!;
      expect(stored.leaseOwner).toBe(holders[0]!.owner);
      expect(stored.leaseUntil).toBe(new Date(now.getTime() + 30_000).toISOString());
      // Leases say who works, not what the state is: the version does not move.
      expect(stored.version).toBe(operation.version);
    });

    it('are renewed and released by their holder only', async () => {
      const operation = await newOperation();
      expect(await leases.acquire(operation.id, 'w1', 1000)).not.toBeNull();
      expect(await leases.acquire(operation.id, 'w1', 5000)).toMatchObject({ owner: 'w1' }); // re-entrant
      expect(await leases.renew(operation.id, 'w2', 5000)).toBeNull();
      expect(await leases.renew(operation.id, 'w1', 9000)).toEqual({
        operationId: operation.id,
        owner: 'w1',
        until: new Date(now.getTime() + 9000).toISOString(),
      });
      expect(await leases.release(operation.id, 'w2')).toBe(false);
      expect(await leases.release(operation.id, 'w1')).toBe(true);
      expect((await operations.get(operation.id))!.leaseOwner).toBeUndefined();
      expect(await leases.acquire(operation.id, 'w2', 1000)).not.toBeNull();
    });

    it('expire: another worker takes over and the old holder can no longer renew', async () => {
      const operation = await newOperation();
      expect(await leases.acquire(operation.id, 'crashed', 1000)).not.toBeNull();
      expect(await leases.acquire(operation.id, 'rescuer', 1000)).toBeNull();
      now = new Date(now.getTime() + 1001);
      expect(await leases.acquire(operation.id, 'rescuer', 1000)).not.toBeNull();
      expect(await leases.renew(operation.id, 'crashed', 1000)).toBeNull();
      expect((await operations.get(operation.id))!.leaseOwner).toBe('rescuer');
    });

    it('are never granted on a completed operation; completion hands the lease to the terminal sequence until it is done', async () => {
      const operation = await newOperation();
      await leases.acquire(operation.id, 'w', 60_000);
      await operations.complete(operation.id, 'done');
      expect((await operations.get(operation.id))!.leaseOwner).toBe(TERMINAL_HOOKS_OWNER);
      expect(await leases.acquire(operation.id, 'w', 60_000)).toBeNull();
      expect(await leases.acquire(randomUUID(), 'w', 60_000)).toBeNull();
      await operations.markTerminalHooksDone(operation.id);
      expect((await operations.get(operation.id))!.leaseOwner).toBeUndefined();
    });

    it('owed terminal sequences: claimed once their hold lapsed, by one claimant, and never after they are done', async () => {
      const owed = await newOperation();
      const finished = await newOperation();
      await operations.complete(owed.id, 'done');
      await operations.complete(finished.id, 'done');
      await operations.markTerminalHooksDone(finished.id);
      expect((await operations.claimOwedTerminalHooks('r1', 60_000)).map((o) => o.id)).not.toContain(owed.id); // still held
      now = new Date(now.getTime() + TERMINAL_HOOKS_LEASE_MS + 1);
      const [first, second] = await Promise.all([operations.claimOwedTerminalHooks('r1', 60_000), operations.claimOwedTerminalHooks('r2', 60_000)]);
      const claims = [...first!, ...second!].filter((o) => o.id === owed.id);
      expect(claims).toHaveLength(1);
      expect([...first!, ...second!].map((o) => o.id)).not.toContain(finished.id);
      await operations.markTerminalHooksDone(owed.id);
      now = new Date(now.getTime() + 120_000);
      expect((await operations.claimOwedTerminalHooks('r3', 60_000)).map((o) => o.id)).not.toContain(owed.id);
    });

    it('list running operations nobody holds, for the reconciler', async () => {
      const free = await newOperation();
      const held = await newOperation();
      const expired = await newOperation();
      const done = await newOperation();
      await leases.acquire(held.id, 'w', 60_000);
      await leases.acquire(expired.id, 'w', 10);
      await operations.complete(done.id, 'done');
      now = new Date(now.getTime() + 50);
      // Quiet since now: every unleased one counts (the reconciler passes `now - leaseMs`).
      const ids = (await leases.listRecoverable(now.toISOString(), 10_000)).map((operation) => operation.id);
      expect(ids).toEqual(expect.arrayContaining([free.id, expired.id]));
      expect(ids).not.toContain(held.id);
      expect(ids).not.toContain(done.id);
    });
  });

  describe('across two connections (two processes)', () => {
    let second: DataSource;

    beforeAll(async () => {
      second = await openAgentHooksDataSource(db.option);
    });

    afterAll(async () => {
      await second.destroy();
    });

    it('still lets exactly one placeholder write and one lease acquisition win', async () => {
      const operation = await newOperation();
      await placeholders.createEmpty(operation.id, 'call-1');
      const otherHandle = new StoreDatabase(second);
      const otherPlaceholders = new ToolResultPlaceholderStore(otherHandle, { clock });
      const otherLeases = new OperationLeaseStore(otherHandle, { clock });
      const writes = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          (i % 2 === 0 ? placeholders : otherPlaceholders).finalize(operation.id, 'call-1', { content: `r${i}`, success: true }),
        ),
      );
      expect(writes.filter(Boolean)).toHaveLength(1);
      expect((await otherPlaceholders.get(operation.id, 'call-1'))!.result!.content).toBe(`r${writes.indexOf(true)}`);
      const grabs = await Promise.all(
        Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? leases : otherLeases).acquire(operation.id, `w${i}`, 60_000)),
      );
      expect(grabs.filter((lease) => lease !== null)).toHaveLength(1);
    });
  });

  describe('interventions', () => {
    const pending = (toolCallId: string, callIndex: number, kind: 'approval' | 'deferred' = 'approval'): NewIntervention => ({
      toolCallId,
      stepIndex: 2,
      callIndex,
      identifier: 'fs',
      apiName: 'write',
      args: { path: '/tmp/x', content: 'ünï' },
      kind,
    });

    it('round-trip and list pending in call order', async () => {
      const operation = await newOperation();
      const added = await interventions.add(operation.id, [pending('c2', 1), pending('c1', 0), pending('d1', 2, 'deferred')]);
      expect(added[0]).toEqual({
        operationId: operation.id,
        toolCallId: 'c2',
        stepIndex: 2,
        callIndex: 1,
        identifier: 'fs',
        apiName: 'write',
        args: { path: '/tmp/x', content: 'ünï' },
        kind: 'approval',
        status: 'pending',
        createdAt: now.toISOString(),
        updatedAt: now.toISOString(),
      });
      expect(await interventions.get(operation.id, 'c2')).toEqual(added[0]);
      expect((await interventions.listPending(operation.id)).map((item) => item.toolCallId)).toEqual(['c1', 'c2', 'd1']);
      await expect(interventions.add(operation.id, [pending('c1', 0)])).rejects.toThrow();
    });

    it('are decided once: of concurrent approve/reject clicks exactly one wins', async () => {
      const operation = await newOperation();
      await interventions.add(operation.id, [pending('c1', 0)]);
      const actions = ['approve', 'reject', 'rejectAndContinue', 'approve', 'reject'] as const;
      const wins = await Promise.all(actions.map((action, i) => interventions.decide(operation.id, 'c1', { action, reason: `r${i}`, decidedBy: `user-${i}` })));
      expect(wins.filter(Boolean)).toHaveLength(1);
      const winner = wins.indexOf(true);
      const decided = (await interventions.get(operation.id, 'c1'))!;
      expect(decided).toMatchObject({
        status: actions[winner] === 'approve' ? 'approved' : 'rejected',
        decision: actions[winner],
        decisionReason: `r${winner}`,
        decidedBy: `user-${winner}`,
        decidedAt: now.toISOString(),
      });
      expect(await interventions.listPending(operation.id)).toEqual([]);
    });

    it('are claimed once, and completed once with a private reply', async () => {
      const operation = await newOperation();
      await interventions.add(operation.id, [pending('c1', 0), pending('d1', 1, 'deferred')]);
      expect(await interventions.complete(operation.id, 'c1', 'too early')).toBe(false); // not approved yet
      expect(await interventions.decide(operation.id, 'd1', { action: 'approve' })).toBe(false); // deferred: no decision
      expect(await interventions.decide(operation.id, 'c1', { action: 'approve' })).toBe(true);

      const claims = await Promise.all(['w1', 'w2', 'w3'].map((worker) => interventions.claim(operation.id, 'c1', worker)));
      expect(claims.filter(Boolean)).toHaveLength(1);
      expect((await interventions.get(operation.id, 'c1'))!.claimedBy).toBe(['w1', 'w2', 'w3'][claims.indexOf(true)]);

      expect(await interventions.complete(operation.id, 'c1', { content: 'written', success: true })).toBe(true);
      expect(await interventions.complete(operation.id, 'c1', { content: 'again', success: true })).toBe(false);
      expect((await interventions.get(operation.id, 'c1'))!).toMatchObject({ status: 'completed', reply: { content: 'written', success: true } });

      expect(await interventions.complete(operation.id, 'd1', { content: 'from the client', success: true })).toBe(true);
      expect(await interventions.claim(operation.id, 'd1', 'late')).toBe(false);
      const rejected = await newOperation();
      await interventions.add(rejected.id, [pending('c9', 0)]);
      await interventions.decide(rejected.id, 'c9', { action: 'reject', reason: 'no' });
      expect(await interventions.claim(rejected.id, 'c9', 'w')).toBe(false);
      expect(await interventions.complete(rejected.id, 'c9')).toBe(false);
    });
  });
});
