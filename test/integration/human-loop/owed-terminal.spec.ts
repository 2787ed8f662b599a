/**
 * Crash safety of the terminal sequence (DESIGN §4: the terminal transition and its onComplete): a process
 * that dies after an operation's terminal transition but before its terminal hooks and the sub-agent
 * bridge leaves them owed in the database; `OwedWork.runOwedTerminalSequences` runs them once the hold lapsed —
 * at least once, never lost, never twice at once.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { RuntimeDatabase } from '../../../src/persistence/runtime-database.js';
import { OwedWork } from '../../../src/runtime/owed-work.js';
import { bootRuntime, eventOf, pointsOf, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { HUMAN_LOOP_CONFIG, HumanLoopTools, untilOperation, waiting } from './human-loop-kit.js';

let app: RuntimeApp;
beforeEach(async () => {
  app = await bootRuntime({ observe: true, config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools] });
});
afterEach(() => app.close());

/** What the queue reconciler (or a local process on first use) calls; internal, not on `AgentRuntime`. */
const runOwed = (): Promise<number> => app.moduleRef.get(OwedWork).runOwedTerminalSequences();

/** What a process that died right after the terminal transition leaves behind, with its hold lapsed. */
async function dieAfterTerminalTransition(operationId: string): Promise<void> {
  expect(await app.store.complete(operationId, 'done')).toBe(true);
  const { dataSource } = await app.moduleRef.get(RuntimeDatabase).stores();
  await dataSource.query(`UPDATE "agent_hooks_operations" SET "lease_until" = '2000-01-01T00:00:00.000Z' WHERE "id" = ?`, [operationId]);
}

describe('owed terminal sequences', () => {
  it('DESIGN §4: onComplete and on_run_end of an operation whose process died after the transition run once, later', async () => {
    const { operationId } = await app.runtime.execAgent({ agentId: 'writer', prompt: 'x' });
    await untilOperation(app.store, operationId, waiting);
    await dieAfterTerminalTransition(operationId);
    expect(pointsOf(app.events, operationId, ['onComplete'])).toEqual([]);
    expect(await runOwed()).toBe(1);
    expect(pointsOf(app.events, operationId, ['onComplete', 'on_run_end'])).toEqual(['onComplete', 'on_run_end']);
    expect(eventOf(app.events, operationId, 'onComplete')?.payload).toMatchObject({ reason: 'done' });
    expect(await runOwed()).toBe(0);
    expect(pointsOf(app.events, operationId, ['onComplete'])).toEqual(['onComplete']);
  });

  it('P5: a child that completed in a process that died before the bridge still reports to its parent', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'boss', prompt: 'x' });
    await untilOperation(app.store, operationId, waiting);
    const childId = (eventOf(app.events, operationId, 'afterCallAgent')?.payload as { subOperationId: string }).subOperationId;
    await untilOperation(app.store, childId, waiting, 'the child');
    await dieAfterTerminalTransition(childId);
    expect((await app.store.getOperation(operationId))?.status).toBe('waiting');
    await runOwed();
    const result = await within(done, 'the parent');
    expect(result).toMatchObject({ reason: 'done', content: 'boss got: ' });
    expect(pointsOf(app.events, childId, ['onComplete'])).toEqual(['onComplete']);
  });
});
