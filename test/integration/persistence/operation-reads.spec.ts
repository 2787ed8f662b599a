/**
 * DESIGN §2: the server reads operations through the runtime's read port (`OPERATION_READER`), which
 * persistence implements over the stores of `RuntimeDatabase.stores()` and answers in the runtime's
 * vocabulary. On a SQLite file and on PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { createRuntimeStores, type RuntimeStores } from '../../../src/persistence/runtime-stores.js';
import { SqlOperationReads } from '../../../src/persistence/sql-operation-reads.js';
import type { OperationReadPort } from '../../../src/runtime/operation-read.port.js';
import { driverSuites, runtimeDatabaseOver, useTestDatabase } from './test-databases.js';

const describeEachDriver = await driverSuites();


const call = (toolCallId: string, callIndex: number) => ({ toolCallId, stepIndex: 0, callIndex, identifier: 'crm', apiName: 'update', args: { id: callIndex }, kind: 'approval' as const });

describeEachDriver('DESIGN §2 the read port (OPERATION_READER) on %s', (driver) => {
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

  it('answers an operation in the runtime vocabulary, and null for one that does not exist', async () => {
    const { operation } = await stores.operations.create({ agentId: 'support', ownerId: 'owner-1', prompt: 'hello' });
    await expect(reads.operation(operation.id)).resolves.toMatchObject({
      id: operation.id,
      agentId: 'support',
      ownerId: 'owner-1',
      status: 'running',
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    });
    await expect(reads.operation(randomUUID())).resolves.toBeNull();
  });

  it('answers the published messages in seq order, only those after afterSeq when given', async () => {
    const { operation } = await stores.operations.create({ agentId: 'support', prompt: 'first' });
    await stores.messages.append(operation.id, [
      { role: 'assistant', content: 'second' },
      { role: 'tool', content: 'third', toolCallId: 'c1', identifier: 'crm', apiName: 'update', success: true },
    ]);
    expect((await reads.messages(operation.id)).map(({ seq, content }) => [seq, content])).toEqual([
      [1, 'first'],
      [2, 'second'],
      [3, 'third'],
    ]);
    expect((await reads.messages(operation.id, 1)).map(({ content }) => content)).toEqual(['second', 'third']);
  });

  it('answers only the pending interventions, in step then call order', async () => {
    const { operation } = await stores.operations.create({ agentId: 'support', prompt: 'approve' });
    await stores.waits.record(operation.id, [call('c2', 1), call('c1', 0), call('c3', 2)]);
    await stores.interventions.decide(operation.id, 'c3', { action: 'approve' });
    expect((await reads.pendingInterventions(operation.id)).map(({ toolCallId, status }) => [toolCallId, status])).toEqual([
      ['c1', 'pending'],
      ['c2', 'pending'],
    ]);
  });

  it('answers the timeline with the outcomes this process still buffers', async () => {
    const { operation } = await stores.operations.create({ agentId: 'support', prompt: 'timeline' });
    stores.timeline.record({ operationId: operation.id, point: 'beforeToolCall', hookId: 'audit', source: 'caller', outcome: 'ok', latencyMs: 2 });
    expect(await reads.timeline(operation.id)).toEqual([
      expect.objectContaining({ seq: 1, operationId: operation.id, point: 'beforeToolCall', hookId: 'audit', source: 'caller', outcome: 'ok', latencyMs: 2 }),
    ]);
  });

  it('counts operations by status and terminal reason, and never opens the database for it', async () => {
    const { operation } = await stores.operations.create({ agentId: 'support', prompt: 'count' });
    await stores.operations.complete(operation.id, 'done');
    const counts = (await reads.operationCounts())!;
    const count = (status: string, reason?: string) => counts.find((row) => row.status === status && row.reason === reason)?.count ?? 0;
    expect(count('completed', 'done')).toBe(1);
    expect(count('running')).toBeGreaterThanOrEqual(4);
    expect(counts.every((row) => typeof row.count === 'number' && (row.status === 'completed') === (row.reason !== undefined))).toBe(true);
    await expect(new SqlOperationReads(runtimeDatabaseOver(stores, false)).operationCounts()).resolves.toBeUndefined();
  });

  it('F4: operations ended by a tool or token budget are counted by the limit reached (their error type), others never', async () => {
    for (const [reason, type] of [['tool_limit', 'perTool'], ['tool_limit', 'perTool'], ['token_limit', 'maxTokens'], ['error', 'TypeError']] as const) {
      const { operation } = await stores.operations.create({ agentId: 'support', prompt: 'limit' });
      await stores.operations.complete(operation.id, reason, { type });
    }
    const counts = (await reads.operationCounts())!;
    expect(counts.filter((row) => row.limit !== undefined).map(({ reason, limit, count }) => ({ reason, limit, count })).sort((a, b) => a.limit!.localeCompare(b.limit!))).toEqual([
      { reason: 'token_limit', limit: 'maxTokens', count: 1 },
      { reason: 'tool_limit', limit: 'perTool', count: 2 },
    ]);
  });
});
