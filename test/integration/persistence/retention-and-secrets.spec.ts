/**
 * Retention (`agentctl purge`): completed operations older than a cutoff go, with every row that belongs
 * to them; nothing else does. And DESIGN §5: no secret is stored anywhere — a run context carrying an
 * inbound access token leaves no trace of it in any table. On a SQLite file and on PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { AuthContext, RunContext } from '../../../src/hooks/contexts.js';
import { AGENT_HOOKS_TABLES } from '../../../src/persistence/agent-hooks-entities.js';
import { dialectOf, qualifiedTable } from '../../../src/persistence/dialect.js';
import { HookOutcomeStore } from '../../../src/persistence/hook-outcome.store.js';
import { InterventionStore } from '../../../src/persistence/intervention.store.js';
import { MessageStore } from '../../../src/persistence/message.store.js';
import { OperationStore } from '../../../src/persistence/operation.store.js';
import { CallerHookStore } from '../../../src/persistence/caller-hook.store.js';
import { OutcomeBatcher } from '../../../src/persistence/outcome-batcher.js';
import { RetentionStore } from '../../../src/persistence/retention.store.js';
import type { RunContextSource } from '../../../src/persistence/run-context-snapshot.js';
import { StepCommitStore } from '../../../src/persistence/step-commit.store.js';
import { ToolResultPlaceholderStore } from '../../../src/persistence/tool-result-placeholder.store.js';
import { driverSuites, useTestDatabase } from './test-databases.js';

const describeEachDriver = await driverSuites();

describeEachDriver('retention on %s', (driver) => {
  const db = useTestDatabase(driver);
  let now = new Date('2001-01-01T00:00:00.000Z');
  const clock = () => now;

  /** An operation with one row in every child table, completed at `completedAt` (or left running). */
  async function seed(createdAt: string, completedAt?: string): Promise<string> {
    now = new Date(createdAt);
    const operations = new OperationStore(db.handle, { clock });
    const { operation } = await operations.create({
      agentId: 'a',
      prompt: 'go',
      callerHooks: [{ hookId: 'h', type: 'afterStep', webhook: { url: 'https://hooks.example.com/h' } }],
    });
    await new MessageStore(db.handle, { clock }).append(operation.id, [{ role: 'assistant', content: 'answer' }]);
    await new HookOutcomeStore(db.handle).append([
      { operationId: operation.id, at: createdAt, point: 'afterStep', hookId: 'h', source: 'caller', outcome: 'ok', latencyMs: 1 },
    ]);
    await new InterventionStore(db.handle, { clock }).add(operation.id, [
      { toolCallId: 'c1', stepIndex: 0, callIndex: 0, identifier: 'fs', apiName: 'write', args: {}, kind: 'approval' },
    ]);
    await new ToolResultPlaceholderStore(db.handle, { clock }).createEmpty(operation.id, 'd1');
    if (completedAt) {
      now = new Date(completedAt);
      await operations.complete(operation.id, 'done');
    }
    return operation.id;
  }

  async function rowsOf(operationId: string) {
    const dataSource = db.handle;
    return {
      operation: await new OperationStore(dataSource).get(operationId),
      messages: (await new MessageStore(dataSource).list(operationId)).length,
      hooks: (await new CallerHookStore(dataSource).list(operationId)).length,
      outcomes: (await new HookOutcomeStore(dataSource).listByOperation(operationId)).length,
      interventions: (await new InterventionStore(dataSource).get(operationId, 'c1')) !== null,
      placeholders: (await new ToolResultPlaceholderStore(dataSource).list(operationId)).length,
    };
  }

  it('purges completed operations finished before the cutoff with all their rows, in batches, and nothing else', async () => {
    const oldDone = [
      await seed('2001-01-01T00:00:00.000Z', '2001-01-02T00:00:00.000Z'),
      await seed('2002-01-01T00:00:00.000Z', '2002-06-01T00:00:00.000Z'),
      await seed('2003-01-01T00:00:00.000Z', '2019-12-31T23:59:59.999Z'),
    ];
    const oldRunning = await seed('2001-01-01T00:00:00.000Z');
    const finishedAfterCutoff = await seed('2001-01-01T00:00:00.000Z', '2020-01-01T00:00:00.000Z');
    const recent = await seed('2029-01-01T00:00:00.000Z', '2029-01-02T00:00:00.000Z');

    const counts = await new RetentionStore(db.handle).purgeCompletedBefore(new Date('2020-01-01T00:00:00.000Z'), { batchSize: 2 });
    expect(counts).toEqual({ operations: 3, messages: 6, callerHooks: 3, hookOutcomes: 3, interventions: 3, placeholders: 3 });

    for (const id of oldDone) {
      expect(await rowsOf(id)).toEqual({ operation: null, messages: 0, hooks: 0, outcomes: 0, interventions: false, placeholders: 0 });
    }
    for (const id of [oldRunning, finishedAfterCutoff, recent]) {
      expect(await rowsOf(id)).toMatchObject({ messages: 2, hooks: 1, outcomes: 1, interventions: true, placeholders: 1 });
      expect((await rowsOf(id)).operation).not.toBeNull();
    }
    expect(await new RetentionStore(db.handle).purgeCompletedBefore(new Date('2020-01-01T00:00:00.000Z'))).toEqual({
      operations: 0,
      messages: 0,
      callerHooks: 0,
      hookOutcomes: 0,
      interventions: 0,
      placeholders: 0,
    });
  });
});

describeEachDriver('no secret stored on %s', (driver) => {
  const db = useTestDatabase(driver);

  it('keeps the run context’s allowed fields and never the inbound access token, in any table', async () => {
    const token = `tok-${randomUUID()}`;
    const operations = new OperationStore(db.handle);
    const commits = new StepCommitStore(db.handle);

    const fromRunContext = await operations.create({
      agentId: 'assistant',
      ownerId: 'owner-1',
      prompt: 'summarize the wiki',
      runContext: new RunContext({
        runId: randomUUID(),
        userId: 'user-1',
        organizationId: 'org-1',
        authContext: new AuthContext({ inboundAccessToken: token, scopes: ['kb:read'] }),
        metadata: { team: 'platform' },
      }),
    });
    expect(fromRunContext.operation.runContext).toEqual({
      userId: 'user-1',
      organizationId: 'org-1',
      scopes: ['kb:read'],
      metadata: { team: 'platform' },
    });

    // A hand-built context smuggling the token in every place a careless caller might put it.
    const smuggling = {
      userId: 'user-2',
      inboundAccessToken: token,
      token,
      authorization: `Bearer ${token}`,
      authContext: { inboundAccessToken: token, scopes: ['kb:write'] },
    } as RunContextSource;
    const fromObject = await operations.create({ agentId: 'assistant', prompt: 'p', runContext: smuggling });
    expect(fromObject.operation.runContext).toEqual({ userId: 'user-2', scopes: ['kb:write'] });
    await commits.commit({ operationId: fromObject.operation.id, expectedVersion: 1, patch: { runContext: smuggling, stepIndex: 1 } });

    const outcomes = new OutcomeBatcher(new HookOutcomeStore(db.handle));
    outcomes.record({ operationId: fromObject.operation.id, point: 'on_run_start', hookId: 'auth', source: 'decorator', outcome: 'ok', latencyMs: 2 });
    await outcomes.close();

    expect(dialectOf(db.dataSource)).toBe(driver);
    let rowsSeen = 0;
    for (const table of AGENT_HOOKS_TABLES) {
      const rows: unknown[] = await db.dataSource.query(`SELECT * FROM ${qualifiedTable(db.dataSource, table)}`);
      rowsSeen += rows.length;
      expect(JSON.stringify(rows)).not.toContain(token);
    }
    // The scan saw the operations, their prompts, the timeline row: it looked where the token could be.
    expect(rowsSeen).toBeGreaterThanOrEqual(5);
    expect((await operations.get(fromObject.operation.id))!.runContext).toEqual({ userId: 'user-2', scopes: ['kb:write'] });
  });
});
