/**
 * The persistence-sensitive paths of approvals, restarts and sub-agents on both databases (SQLite file and PostgreSQL): the restart
 * (a new app on the same database approves), and 50 concurrent `completeDeferred` calls for one tool call —
 * exactly one winner, one published message (L4). Under CI=true an unreachable PostgreSQL fails the suite.
 */
import { expect, it } from '@jest/globals';
import { AlreadyCompletedError } from '../../../src/index.js';
import { RuntimeDatabase } from '../../../src/persistence/runtime-database.js';
import { appDatabases } from '../persistence/test-databases.js';
import { bootRuntime, eventually, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { startReceiver } from '../../unit/webhooks/loopback-receiver.js';
import { HUMAN_LOOP_CONFIG, HumanLoopTools, executions, untilOperation, waiting } from '../human-loop/human-loop-kit.js';

const { describeEach, databaseFor, schema } = await appDatabases('both');

describeEach('human loop and restarts on %s', (driver) => {
  it('restart: waiting → close → a new app on the same database approves → done; the tool ran once', async () => {
    executions.write = 0;
    const database = databaseFor(driver, 'restart');
    const first: RuntimeApp = await bootRuntime({ config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools], database });
    let operationId: string;
    try {
      ({ operationId } = await first.runtime.execAgent({ agentId: 'writer', prompt: 'write' }));
      await untilOperation(first.store, operationId, waiting);
    } finally {
      await first.close();
    }
    const second = await bootRuntime({ config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools], database });
    try {
      const [pending] = await second.store.interventions(operationId);
      await second.runtime.approve(operationId, pending!.toolCallId);
      expect(await within(second.runtime.result(operationId), 'resumed', 20_000)).toMatchObject({ reason: 'done', content: 'wrote: written /tmp/report.txt' });
      expect(executions.write).toBe(1);
      await expect(second.runtime.approve(operationId, pending!.toolCallId)).rejects.toThrow(/not waiting for a decision/);
    } finally {
      await second.close();
    }
  }, 60_000);

  it('L2: a cancel from a new app on the same database delivers the operation\'s stored onComplete caller webhook', async () => {
    const receiver = await startReceiver({ '/done': (req, res) => req.on('end', () => res.writeHead(204).end()) });
    const database = databaseFor(driver, 'cancel-elsewhere');
    const webhooks = { allowNetworks: ['127.0.0.1/32'] };
    try {
      const first = await bootRuntime({ config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools], database, webhooks });
      let operationId: string;
      try {
        ({ operationId } = await first.runtime.execAgent({ agentId: 'writer', prompt: 'write', hooks: [{ id: 'done', type: 'onComplete', webhook: { url: receiver.url('/done') } }] }));
        await untilOperation(first.store, operationId, waiting);
      } finally {
        await first.close();
      }
      const second = await bootRuntime({ config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools], database, webhooks });
      try {
        await second.runtime.cancel(operationId);
        expect(await within(second.runtime.result(operationId), 'cancelled', 20_000)).toMatchObject({ reason: 'interrupted' });
        await eventually(() => receiver.requests.some((r) => r.path === '/done' && r.body.includes('interrupted')), 'the onComplete webhook');
      } finally {
        await second.close();
      }
    } finally {
      await receiver.close();
    }
  }, 60_000);

  it('L4: 50 concurrent completeDeferred calls for one tool call → exactly one winner and one published message', async () => {
    const app = await bootRuntime({ config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools], database: databaseFor(driver, 'race') });
    try {
      const { operationId, done } = await app.runtime.execAgent({ agentId: 'browser', prompt: 'open' });
      await untilOperation(app.store, operationId, waiting);
      const [item] = await app.store.interventions(operationId);
      const results = await Promise.allSettled(
        Array.from({ length: 50 }, (_, i) => app.runtime.completeDeferred(operationId, item!.toolCallId, { content: `result ${i}`, success: true })),
      );
      const winners = results.filter((r) => r.status === 'fulfilled');
      expect(winners).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(AlreadyCompletedError);
      const final = await within(done, 'done', 20_000);
      const tools = (await app.store.messages(operationId)).filter((m) => m.role === 'tool');
      expect(tools).toHaveLength(1);
      expect(final.content).toBe(`page: ${tools[0]!.content}`);
    } finally {
      await app.close();
    }
  }, 60_000);

  it('DESIGN §4: the database refuses a second published result for one tool call (unique key), and rolls the commit back', async () => {
    const app = await bootRuntime({ config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools], database: databaseFor(driver, 'unique') });
    try {
      const { operationId, done } = await app.runtime.execAgent({ agentId: 'browser', prompt: 'open' });
      await untilOperation(app.store, operationId, waiting);
      const [item] = await app.store.interventions(operationId);
      await app.runtime.completeDeferred(operationId, item!.toolCallId, { content: 'first', success: true });
      await within(done, 'done', 20_000);
      const before = await app.store.getOperation(operationId);
      // Complete the operation's row aside, a second publish of the same call must still fail on the key.
      const { dataSource } = await app.moduleRef.get(RuntimeDatabase).stores();
      await dataSource.query(`UPDATE ${driver === 'postgres' ? `"${schema}".` : ''}"agent_hooks_operations" SET "status" = 'running' WHERE "id" = ${driver === 'postgres' ? '$1' : '?'}`, [operationId]);
      const duplicate = { role: 'tool' as const, content: 'second', toolCallId: item!.toolCallId, identifier: 'browser', apiName: 'open' };
      await expect(app.store.commit(operationId, before!.version, duplicate, { stepIndex: 99 })).rejects.toThrow();
      expect((await app.store.getOperation(operationId))?.stepIndex).toBe(before!.stepIndex);
      expect((await app.store.messages(operationId)).filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['first']);
    } finally {
      await app.close();
    }
  }, 60_000);
});

