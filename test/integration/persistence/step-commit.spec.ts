/**
 * P1 and optimistic versioning: a step's messages and its state change commit together or not at all,
 * guarded by the version (and, for a lease holder, the lease) — on a SQLite file and on PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { MessageStore } from '../../../src/persistence/message.store.js';
import { OperationLeaseStore } from '../../../src/persistence/operation-lease.store.js';
import { OperationStore } from '../../../src/persistence/operation.store.js';
import { OperationNotFoundError, StaleOperationError } from '../../../src/persistence/persistence-errors.js';
import type { SqlStatement } from '../../../src/persistence/sql-session.js';
import { StepCommitStore } from '../../../src/persistence/step-commit.store.js';
import { HookOutcomeStore } from '../../../src/persistence/hook-outcome.store.js';
import type { NewHookOutcome, NewToolMessage } from '../../../src/persistence/records.js';
import { insertsMessage, StatementFailpoint, updatesOperation } from './statement-failpoint.js';
import { driverSuites, useTestDatabase } from './test-databases.js';

const describeEachDriver = await driverSuites();

const toolMessage = (content: string, toolCallId = 'call-1'): NewToolMessage => ({
  role: 'tool',
  content,
  toolCallId,
  identifier: 'clock',
  apiName: 'now',
});

describeEachDriver('step commits on %s', (driver) => {
  // The production statements, failed after the operation's UPDATE ran (before its transaction commits).
  const failpoint = new StatementFailpoint();
  const db = useTestDatabase(driver, { wrapSession: failpoint.wrap });
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

  afterEach(() => failpoint.clear());

  const newOperation = async () => (await operations.create({ agentId: 'a', prompt: 'go', runContext: { userId: 'u' } })).operation;

  it('applies the patch, appends the messages after the prompt and bumps the version', async () => {
    const operation = await newOperation();
    const result = await commits.commit({
      operationId: operation.id,
      expectedVersion: 1,
      messages: [{ role: 'assistant', content: 'calling', toolCalls: [{ id: 'call-1', identifier: 'clock', apiName: 'now', args: {} }] }],
      patch: {
        stepIndex: 1,
        status: 'waiting',
        usage: { inputTokens: 12, outputTokens: 7, costUsd: 0.000123456789 },
        runContext: { userId: 'u', metadata: { turn: 1 } },
      },
    });
    expect(result.operation).toMatchObject({
      version: 2,
      stepIndex: 1,
      status: 'waiting',
      usage: { inputTokens: 12, outputTokens: 7, costUsd: 0.000123456789 },
      runContext: { userId: 'u', metadata: { turn: 1 } },
    });
    expect(result.messages.map((message) => message.seq)).toEqual([2]);
    expect(await operations.get(operation.id)).toEqual(result.operation);
  });

  it('publishes a tool result with its state change in one commit', async () => {
    const operation = await newOperation();
    const published = await commits.publishToolResult({
      operationId: operation.id,
      expectedVersion: operation.version,
      message: { ...toolMessage('sanitized'), error: 'hook_control_error', state: { hookVerdict: { outcome: 'control_error', phase: 'afterToolCall', reason: 'timeout' } } },
      patch: { usage: { inputTokens: 1, outputTokens: 2, costUsd: 0.5 } },
    });
    expect(published.message).toMatchObject({ seq: 2, role: 'tool', toolCallId: 'call-1', error: 'hook_control_error' });
    expect(published.operation.version).toBe(2);
    const conversation = await messages.list(operation.id);
    expect(conversation[1]).toEqual(published.message);
  });

  it('detects a version conflict: the second writer with the same expected version fails and writes nothing', async () => {
    const operation = await newOperation();
    await commits.publishToolResult({ operationId: operation.id, expectedVersion: 1, message: toolMessage('first'), patch: { stepIndex: 1 } });
    const stale = commits.publishToolResult({ operationId: operation.id, expectedVersion: 1, message: toolMessage('second'), patch: { stepIndex: 9 } });
    await expect(stale).rejects.toBeInstanceOf(StaleOperationError);
    await expect(stale).rejects.toMatchObject({ code: 'stale_operation', operationId: operation.id, expectedVersion: 1 });
    expect((await operations.get(operation.id))!).toMatchObject({ version: 2, stepIndex: 1 });
    expect((await messages.list(operation.id)).map((message) => message.content)).toEqual(['go', 'first']);
  });

  it('lets exactly one of many concurrent commits at one version win', async () => {
    const operation = await newOperation();
    const attempts = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        commits.publishToolResult({ operationId: operation.id, expectedVersion: 1, message: toolMessage(`r${i}`), patch: { stepIndex: i + 1 } }),
      ),
    );
    const won = attempts.filter((attempt) => attempt.status === 'fulfilled');
    const lost = attempts.filter((attempt): attempt is PromiseRejectedResult => attempt.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost.every((attempt) => attempt.reason instanceof StaleOperationError)).toBe(true);
    const conversation = await messages.list(operation.id);
    expect(conversation).toHaveLength(2);
    const winner = attempts.indexOf(won[0]!);
    expect(conversation[1]!.content).toBe(`r${winner}`);
    expect((await operations.get(operation.id))!).toMatchObject({ version: 2, stepIndex: winner + 1 });
  });

  it.each([
    ['after the operation update', (statement: SqlStatement, id: string) => updatesOperation(statement, id)],
    ['after the message insert (the last write)', (statement: SqlStatement, id: string) => insertsMessage(statement, 'tool') && statement.params.includes(id)],
  ])('publishes nothing when a failure strikes %s, before the commit', async (_point, strikes) => {
    const operation = await newOperation();
    failpoint.afterStatement = (statement) => {
      if (strikes(statement, operation.id)) throw new Error('injected: the process died mid-publish');
    };
    await expect(
      commits.publishToolResult({ operationId: operation.id, expectedVersion: 1, message: toolMessage('must not appear'), patch: { stepIndex: 5, usage: { inputTokens: 9, outputTokens: 9, costUsd: 9 } } }),
    ).rejects.toThrow('injected');
    const unchanged = await operations.get(operation.id);
    expect(unchanged).toEqual(operation);
    expect((await messages.list(operation.id)).map((message) => message.content)).toEqual(['go']);

    // The retry at the same version goes through: nothing half-written blocks it.
    failpoint.clear();
    const retried = await commits.publishToolResult({ operationId: operation.id, expectedVersion: 1, message: toolMessage('published once'), patch: { stepIndex: 5 } });
    expect(retried.operation.version).toBe(2);
    expect((await messages.list(operation.id)).map((message) => message.content)).toEqual(['go', 'published once']);
  });

  it('publishes nothing when the message itself cannot be written (unserializable state)', async () => {
    const operation = await newOperation();
    await expect(
      commits.publishToolResult({
        operationId: operation.id,
        expectedVersion: 1,
        message: { ...toolMessage('x'), state: { size: BigInt(1) } },
        patch: { stepIndex: 3 },
      }),
    ).rejects.toThrow();
    expect(await operations.get(operation.id)).toEqual(operation);
    expect(await messages.list(operation.id)).toHaveLength(1);
  });

  it('keeps a concurrent writer’s work when another commit rolls back meanwhile', async () => {
    const doomed = await newOperation();
    const bystander = await newOperation();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    failpoint.afterStatement = async (statement) => {
      if (!updatesOperation(statement, doomed.id)) return;
      await gate;
      throw new Error('injected rollback');
    };
    const failing = commits.commit({ operationId: doomed.id, expectedVersion: 1, messages: [{ role: 'assistant', content: 'lost' }] });
    const succeeding = messages.append(bystander.id, [{ role: 'assistant', content: 'kept' }]);
    setTimeout(release, 20);
    await expect(failing).rejects.toThrow('injected rollback');
    await expect(succeeding).resolves.toHaveLength(1);
    expect((await messages.list(bystander.id)).map((message) => message.content)).toEqual(['go', 'kept']);
    expect((await messages.list(doomed.id)).map((message) => message.content)).toEqual(['go']);
  });

  it('refuses to commit to a completed operation', async () => {
    const operation = await newOperation();
    expect(await operations.complete(operation.id, 'interrupted')).toBe(true);
    const completed = (await operations.get(operation.id))!;
    await expect(
      commits.publishToolResult({ operationId: operation.id, expectedVersion: completed.version, message: toolMessage('late') }),
    ).rejects.toBeInstanceOf(StaleOperationError);
    expect(await messages.list(operation.id)).toHaveLength(1);
  });

  it('fences a commit by lease owner: a worker whose lease moved on cannot publish', async () => {
    const operation = await newOperation();
    expect(await leases.acquire(operation.id, 'worker-1', 60_000)).not.toBeNull();
    await expect(
      commits.publishToolResult({ operationId: operation.id, expectedVersion: 1, leaseOwner: 'worker-2', message: toolMessage('intruder') }),
    ).rejects.toBeInstanceOf(StaleOperationError);
    const ok = await commits.publishToolResult({ operationId: operation.id, expectedVersion: 1, leaseOwner: 'worker-1', message: toolMessage('holder') });
    expect(ok.operation.version).toBe(2);
    expect((await messages.list(operation.id)).map((message) => message.content)).toEqual(['go', 'holder']);
  });

  it('names a missing operation, and never completes one through a patch', async () => {
    await expect(commits.commit({ operationId: randomUUID(), expectedVersion: 1, patch: { stepIndex: 1 } })).rejects.toBeInstanceOf(
      OperationNotFoundError,
    );
    const operation = await newOperation();
    expect(() =>
      commits.commit({ operationId: operation.id, expectedVersion: 1, patch: { status: 'completed' as 'running' } }),
    ).toThrow(TypeError);
    expect((await operations.get(operation.id))!.status).toBe('running');
  });

  it('writes the hook timeline rows it is given in its own transaction where it can (SQLite); a refused commit writes none of them', async () => {
    const timeline = new HookOutcomeStore(db.handle);
    const folding = new StepCommitStore(db.handle, { timeline });
    const operation = await newOperation();
    const rows = ['before', 'after'].map((hookId): NewHookOutcome => ({ operationId: operation.id, at: new Date().toISOString(), point: 'afterToolCall', hookId, source: 'caller', outcome: 'ok', latencyMs: 1 }));
    const hookIds = async () => (await timeline.listByOperation(operation.id)).map((row) => row.hookId);
    expect(folding.writesTimeline).toBe(driver === 'sqlite');
    if (!folding.writesTimeline) {
      // PostgreSQL commits in one statement: the caller flushes the timeline first instead.
      expect(() => folding.commit({ operationId: operation.id, expectedVersion: 1, messages: [toolMessage('x')], timeline: rows })).toThrow(TypeError);
      return;
    }
    await expect(folding.commit({ operationId: operation.id, expectedVersion: 7, messages: [toolMessage('stale')], timeline: rows })).rejects.toBeInstanceOf(StaleOperationError);
    expect(await hookIds()).toEqual([]);
    const committed = await folding.commit({ operationId: operation.id, expectedVersion: 1, messages: [toolMessage('published')], timeline: rows });
    expect(committed.operation.version).toBe(2);
    expect(await hookIds()).toEqual(['before', 'after']);
    expect((await timeline.listByOperation(operation.id)).map((row) => row.seq)).toEqual([1, 2]);
  });
});
