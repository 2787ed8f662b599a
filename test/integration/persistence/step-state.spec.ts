/**
 * DESIGN §3/§4 (issue 14): a step begins from what this process committed last instead of reloading it —
 * and still from what is committed now: whatever another writer changed since (a version bump, a message
 * appended without one) is read in full. Messages take their seq from the counter on the operation's row,
 * whoever appends them. On a SQLite file and on PostgreSQL.
 */
import { QueryFailedError } from 'typeorm';
import { MessageStore } from '../../../src/persistence/message.store.js';
import { OperationLeaseStore } from '../../../src/persistence/operation-lease.store.js';
import { OperationStore } from '../../../src/persistence/operation.store.js';
import { StepCommitStore, type StepCommit } from '../../../src/persistence/step-commit.store.js';
import { isUniqueViolation } from '../../../src/persistence/sql-errors.js';
import { StepStateStore } from '../../../src/persistence/step-state.store.js';
import { driverSuites, useTestDatabase } from './test-databases.js';

const describeEachDriver = await driverSuites();

describeEachDriver('step state on %s', (driver) => {
  const db = useTestDatabase(driver);
  let operations: OperationStore;
  let messages: MessageStore;
  let commits: StepCommitStore;
  let leases: OperationLeaseStore;

  beforeAll(() => {
    operations = new OperationStore(db.handle);
    messages = new MessageStore(db.handle);
    commits = new StepCommitStore(db.handle);
    leases = new OperationLeaseStore(db.handle);
  });

  /** A new operation, known to `states` as its creator. */
  async function created(states: StepStateStore) {
    const made = await operations.create({ agentId: 'a', prompt: 'go', runContext: { userId: 'u' } });
    states.created(made.operation, made.messages!);
    return made.operation;
  }

  /** A commit on what `states` knows, reported back to it, as the runtime's store does with each of its commits. */
  async function commit(states: StepStateStore, input: StepCommit) {
    const base = states.known(input.operationId, input.expectedVersion);
    const result = await commits.commit({ ...input, ...(base ? { base } : {}) });
    expect(result.operation).toEqual((await freshRead(input.operationId))!.operation);
    states.committed(input.operationId, input.expectedVersion, result, input.leaseOwner);
    return result;
  }

  const freshRead = (operationId: string) => new StepStateStore(db.handle).read(operationId);

  it('begins each step from the state its own commits left, equal to a full read (JSON columns, usage, lease, compaction, seqs)', async () => {
    const states = new StepStateStore(db.handle);
    const operation = await created(states);
    const call = { id: 'call-1', identifier: 'clock', apiName: 'now', args: { at: { zone: 'UTC' }, n: [1, 2] } };
    await commit(states, {
      operationId: operation.id,
      expectedVersion: 1,
      messages: [{ role: 'assistant', content: 'calling', toolCalls: [call] }],
      patch: { usage: { inputTokens: 3, outputTokens: 4, costUsd: 0.000123456789 }, runContext: { userId: 'u', metadata: { turn: 1 } } },
    });
    // Under a lease (taken without a version bump), the next commits are fenced by it.
    expect(await leases.acquire(operation.id, 'worker-1', 60_000)).not.toBeNull();
    await commit(states, {
      operationId: operation.id,
      expectedVersion: 2,
      messages: [{ role: 'tool', content: 'noon', toolCallId: 'call-1', identifier: 'clock', apiName: 'now', success: true }],
      leaseOwner: 'worker-1',
    });
    await commit(states, { operationId: operation.id, expectedVersion: 3, patch: { compaction: { groupId: 'g-1', summary: 'so far', throughSeq: 2 } }, leaseOwner: 'worker-1' });
    await commit(states, { operationId: operation.id, expectedVersion: 4, patch: { stepIndex: 1, status: 'waiting' }, leaseOwner: 'worker-1' });

    const kept = await states.read(operation.id);
    const full = await freshRead(operation.id);
    expect(kept).toEqual(full);
    expect(kept!.operation).toMatchObject({ version: 5, stepIndex: 1, status: 'waiting', leaseOwner: 'worker-1', compaction: { throughSeq: 2 }, usage: { inputTokens: 3, outputTokens: 4, costUsd: 0.000123456789 } });
    expect(kept!.messages.map((m) => [m.seq, m.role])).toEqual([
      [1, 'user'],
      [2, 'assistant'],
      [3, 'tool'],
    ]);
  });

  it('hands each step its own copy: what a step appends to its conversation is not what the next one begins from', async () => {
    const states = new StepStateStore(db.handle);
    const operation = await created(states);
    const first = await states.read(operation.id);
    first!.messages.push({ ...first!.messages[0]!, seq: 99 });
    first!.operation.stepIndex = 42;
    const second = await states.read(operation.id);
    expect(second!.messages.map((m) => m.seq)).toEqual([1]);
    expect(second!.operation.stepIndex).toBe(0);
  });

  it('reads in full what another writer changed since: a message appended without a version bump, a commit of another process', async () => {
    const states = new StepStateStore(db.handle);
    const operation = await created(states);
    await commit(states, { operationId: operation.id, expectedVersion: 1, messages: [{ role: 'assistant', content: 'calling' }] });

    // Another writer appends (as a deferred result does: no version bump) — the counter moved.
    await messages.append(operation.id, [{ role: 'tool', content: 'late', toolCallId: 'late-1', identifier: 'x', apiName: 'y' }]);
    const afterAppend = await states.read(operation.id);
    expect(afterAppend!.messages.map((m) => m.content)).toEqual(['go', 'calling', 'late']);

    // Another process commits (its commit is not reported here) — the version moved.
    await commits.commit({ operationId: operation.id, expectedVersion: 2, patch: { stepIndex: 5 } });
    const afterCommit = await states.read(operation.id);
    expect(afterCommit).toEqual(await freshRead(operation.id));
    expect(afterCommit!.operation.stepIndex).toBe(5);
  });

  it('continues every appender from the counter on the row: seqs stay contiguous across commits and appends', async () => {
    const states = new StepStateStore(db.handle);
    const operation = await created(states);
    await commit(states, { operationId: operation.id, expectedVersion: 1, messages: [{ role: 'assistant', content: 'a' }] });
    await messages.append(operation.id, [
      { role: 'user', content: 'b' },
      { role: 'user', content: 'c' },
    ]);
    const last = await commits.commit({ operationId: operation.id, expectedVersion: 2, messages: [{ role: 'assistant', content: 'd' }] });
    expect(last.messages[0]!.seq).toBe(5);
    expect(last.messageSeq).toBe(5);
    expect((await messages.list(operation.id)).map((m) => [m.seq, m.content])).toEqual([
      [1, 'go'],
      [2, 'a'],
      [3, 'b'],
      [4, 'c'],
      [5, 'd'],
    ]);
  });

  it('P1: a second result for one tool call is refused by the key whichever path commits it, as the driver error TypeORM would give', async () => {
    const states = new StepStateStore(db.handle);
    const operation = await created(states);
    const result = { role: 'tool' as const, content: 'first', toolCallId: 'call-1', identifier: 'clock', apiName: 'now' };
    await commit(states, { operationId: operation.id, expectedVersion: 1, messages: [result] });
    const refused = await commits.commit({ operationId: operation.id, expectedVersion: 2, messages: [{ ...result, content: 'second' }], patch: { stepIndex: 9 } }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(QueryFailedError);
    expect(isUniqueViolation(refused)).toBe(true);
    const now = await freshRead(operation.id);
    expect(now!.operation).toMatchObject({ version: 2, stepIndex: 0 });
    expect(now!.messages.map((m) => m.content)).toEqual(['go', 'first']);
  });

  it('answers null for an operation that is gone (purged), and forgets it', async () => {
    const states = new StepStateStore(db.handle);
    const operation = await created(states);
    await db.dataSource.query(
      `DELETE FROM ${db.schema ? `"${db.schema}".` : ''}"agent_hooks_operations" WHERE "id" = ${driver === 'postgres' ? '$1' : '?'}`,
      [operation.id],
    );
    expect(await states.read(operation.id)).toBeNull();
  });

  it('stays within its character budget: the least recently used go first, one over it alone is not kept, and reads stay right', async () => {
    const states = new StepStateStore(db.handle, { characters: 300 });
    const first = await created(states);
    const second = await created(states);
    await commit(states, { operationId: first.id, expectedVersion: 1, messages: [{ role: 'assistant', content: 'x'.repeat(200) }] });
    expect(states.size).toEqual({ operations: 2, characters: 204 }); // two prompts of 2, and the answer
    // 400 more on the second: over the budget — the first (least recently used) goes, then the second itself.
    await commit(states, { operationId: second.id, expectedVersion: 1, messages: [{ role: 'assistant', content: 'y'.repeat(400) }] });
    expect(states.size).toEqual({ operations: 0, characters: 0 });
    expect(await states.read(second.id)).toEqual(await freshRead(second.id));
    expect(states.size.operations).toBe(0);
    expect(await states.read(first.id)).toEqual(await freshRead(first.id));
    expect(states.size).toEqual({ operations: 1, characters: 202 });
  });
});
