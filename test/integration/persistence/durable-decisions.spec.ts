/**
 * SPEC G3 (and G5) at the persistence level, on a SQLite file and on PostgreSQL: a decision (approve,
 * reject, a deferred result) and "runnable again" commit in one transaction, with the notifications owed
 * about it — rows claimed by the decider, which a reconciler delivers only once that claim lapsed. A
 * failure anywhere in the transaction leaves none of it; a completed operation gets nothing written.
 * Events about a decision leave only after its commit. A deferred result is stored when it arrives, with
 * the claim of its decider; if that decider dies, a reconciler takes the stored result over.
 */
import { OwedWorkEntity } from '../../../src/persistence/entities/owed-work.entity.js';
import { insertValues } from '../../../src/persistence/entity-values.js';
import { InterventionStore } from '../../../src/persistence/intervention.store.js';
import { MessageStore } from '../../../src/persistence/message.store.js';
import { OperationStore, TERMINAL_HOOKS_OWNER } from '../../../src/persistence/operation.store.js';
import { OperationWaitStore, type DecisionEffects } from '../../../src/persistence/operation-wait.store.js';
import { OwedWorkStore } from '../../../src/persistence/owed-work.store.js';
import type { NewIntervention, NewToolMessage, OperationRecord } from '../../../src/persistence/records.js';
import { ToolResultPlaceholderStore } from '../../../src/persistence/tool-result-placeholder.store.js';
import { rejectionReceipt } from '../../../src/runtime/intervention-receipts.js';
import type { OperationEvent } from '../../../src/runtime/operation-events.port.js';
import { StatementFailpoint, updatesOperationStatus } from './statement-failpoint.js';
import { driverSuites, useTestDatabase } from './test-databases.js';

const describeEachDriver = await driverSuites();

const HOLD_MS = 10_000;
const ARGS = { path: '/srv/very-private-path' };

const approval = (toolCallId: string, callIndex = 0): NewIntervention => ({
  toolCallId,
  stepIndex: 0,
  callIndex,
  identifier: 'fs',
  apiName: 'delete',
  args: ARGS,
  kind: 'approval',
});
const deferred = (toolCallId: string, callIndex = 0): NewIntervention => ({ ...approval(toolCallId, callIndex), kind: 'deferred' });

class Failpoint extends Error {
  override readonly name = 'Failpoint';
}

describeEachDriver('durable decisions on %s', (driver) => {
  // The production statements, failed after the status UPDATE, the last write of a decision's or a deferred publish's transaction.
  const failpoint = new StatementFailpoint();
  const db = useTestDatabase(driver, { wrapSession: failpoint.wrap });
  let now = new Date('2030-01-01T00:00:00.000Z');
  const clock = () => now;
  const advance = (ms: number) => void (now = new Date(now.getTime() + ms));
  /** Fails the unit right after its operation status UPDATE (`afterEach` clears it). */
  const failAfterStatusUpdate = (message: string) => {
    failpoint.afterStatement = (statement) => {
      if (updatesOperationStatus(statement)) throw new Failpoint(message);
    };
  };
  let operations: OperationStore;
  let waits: OperationWaitStore;
  let owedWork: OwedWorkStore;
  let interventions: InterventionStore;
  let messages: MessageStore;
  let placeholders: ToolResultPlaceholderStore;

  beforeAll(() => {
    const dataSource = db.handle;
    operations = new OperationStore(dataSource, { clock });
    waits = new OperationWaitStore(dataSource, { clock });
    owedWork = new OwedWorkStore(dataSource, { clock });
    interventions = new InterventionStore(dataSource, { clock });
    messages = new MessageStore(dataSource);
    placeholders = new ToolResultPlaceholderStore(dataSource, { clock });
  });
  afterEach(() => failpoint.clear());

  /** A new operation waiting on `items` (recorded, then paused). */
  async function waitingOn(items: readonly NewIntervention[]): Promise<OperationRecord> {
    const { operation } = await operations.create({ agentId: 'assistant', prompt: 'tidy up the very private folder' });
    await waits.record(operation.id, items);
    expect(await waits.pause(operation.id)).toBe(true);
    const paused = (await operations.get(operation.id))!;
    expect(paused.status).toBe('waiting');
    return paused;
  }

  const effects = (more: Partial<DecisionEffects> = {}): DecisionEffects => ({
    notify: ['afterHumanIntervention'],
    claimant: 'decider-1',
    holdMs: HOLD_MS,
    ...more,
  });

  /** The events committed for `operationId` from now on. */
  function watchEvents(operationId: string): { seen: OperationEvent[]; stop(): void } {
    const seen: OperationEvent[] = [];
    const subscription = db.handle.committed$.subscribe((event) => {
      if (event.operationId === operationId) seen.push(event);
    });
    return { seen, stop: () => subscription.unsubscribe() };
  }

  /** What a failed or refused decision must have left exactly as it was. */
  async function snapshot(operationId: string) {
    const operation = (await operations.get(operationId))!;
    return {
      status: operation.status,
      version: operation.version,
      interventions: (await interventions.list(operationId)).map(({ toolCallId, status, decision }) => ({ toolCallId, status, decision })),
      messages: (await messages.list(operationId)).length,
      owed: await owedWork.list(operationId),
      placeholders: (await placeholders.list(operationId)).map(({ toolCallId, state }) => ({ toolCallId, state })),
    };
  }

  it('G3: an approval of the last pending call and the resume commit together', async () => {
    const operation = await waitingOn([approval('c1')]);
    const events = watchEvents(operation.id);
    const seenInside: number[] = [];
    failpoint.afterStatement = () => void seenInside.push(events.seen.length);
    try {
      const result = await waits.decideDurably(operation.id, 'c1', { action: 'approve', decidedBy: 'alice' }, effects());
      failpoint.clear();

      expect(result).toMatchObject({ outcome: 'decided', resumed: true, completed: false });
      expect(result.owed).toEqual([
        expect.objectContaining({ operationId: operation.id, point: 'afterHumanIntervention', toolCallId: 'c1', action: 'approve', claimedBy: 'decider-1', attempts: 1 }),
      ]);
      const stored = (await operations.get(operation.id))!;
      expect(stored).toMatchObject({ status: 'running', version: operation.version + 1 });
      expect(await interventions.get(operation.id, 'c1')).toMatchObject({ status: 'approved', decision: 'approve', decidedBy: 'alice' });
      // Nothing left the process while the transaction was open; the commit published what it changed.
      // (one look after each statement of the decision's transaction: lock, decision, owed row, count, resume)
      expect(seenInside.length).toBeGreaterThanOrEqual(5);
      expect(seenInside.every((seen) => seen === 0)).toBe(true);
      expect(events.seen.map((event) => event.kind).sort()).toEqual(['intervention', 'owed', 'status']);
      expect(events.seen.find((event) => event.kind === 'status')).toEqual({ operationId: operation.id, kind: 'status', status: 'running', version: operation.version + 1 });

      // Deciding again is refused and writes nothing more.
      const before = await snapshot(operation.id);
      const again = await waits.decideDurably(operation.id, 'c1', { action: 'reject' }, effects({ claimant: 'decider-2' }));
      expect(again).toEqual({ outcome: 'not_pending', resumed: false, completed: false, owed: [] });
      expect(await snapshot(operation.id)).toEqual(before);
      expect(events.seen).toHaveLength(3);
    } finally {
      events.stop();
    }
  });

  it('G3: an approval while another call is still pending does not resume', async () => {
    const operation = await waitingOn([approval('c1', 0), approval('c2', 1)]);
    const events = watchEvents(operation.id);
    try {
      const first = await waits.decideDurably(operation.id, 'c1', { action: 'approve' }, effects());
      expect(first).toMatchObject({ outcome: 'decided', resumed: false, completed: false });
      expect(first.owed).toHaveLength(1);
      expect(await operations.get(operation.id)).toMatchObject({ status: 'waiting', version: operation.version });
      expect(events.seen.map((event) => event.kind).sort()).toEqual(['intervention', 'owed']);
      expect(events.seen.every((event) => event.status === 'waiting' && event.version === operation.version)).toBe(true);

      // The last pending call, rejected so that the run goes on, is the one that resumes.
      const last = await waits.decideDurably(operation.id, 'c2', { action: 'rejectAndContinue', reason: 'not that one' }, effects());
      expect(last).toMatchObject({ outcome: 'decided', resumed: true, completed: false });
      expect(last.owed).toEqual([expect.objectContaining({ point: 'afterHumanIntervention', toolCallId: 'c2', action: 'rejectAndContinue' })]);
      expect(await operations.get(operation.id)).toMatchObject({ status: 'running', version: operation.version + 1 });
    } finally {
      events.stop();
    }
  });

  it('G3: a rejection stores its receipt and the terminal transition in one transaction; the terminal sequence is owed', async () => {
    const operation = await waitingOn([approval('c1', 0), approval('c2', 1)]);
    const call = { id: 'c1', identifier: 'fs', apiName: 'delete', args: ARGS };
    const receipt = rejectionReceipt(call, 'too risky') as NewToolMessage;
    const stop = effects({ notify: ['onStopByHumanIntervention'], receipt });

    // A failure after the receipt and the transition were written: neither is kept, nor the decision.
    const before = await snapshot(operation.id);
    failAfterStatusUpdate('after the terminal transition');
    await expect(waits.decideDurably(operation.id, 'c1', { action: 'reject', reason: 'too risky' }, stop)).rejects.toThrow(Failpoint);
    expect(await snapshot(operation.id)).toEqual(before);
    failpoint.clear();

    const events = watchEvents(operation.id);
    try {
      const result = await waits.decideDurably(operation.id, 'c1', { action: 'reject', reason: 'too risky' }, stop);
      expect(result).toMatchObject({ outcome: 'decided', resumed: false, completed: true });
      const stored = (await operations.get(operation.id))!;
      expect(stored).toMatchObject({
        status: 'completed',
        reason: 'interrupted',
        version: operation.version + 1,
        completedAt: now.toISOString(),
        leaseOwner: TERMINAL_HOOKS_OWNER,
        leaseUntil: new Date(now.getTime() + HOLD_MS).toISOString(),
      });
      const conversation = await messages.list(operation.id);
      expect(conversation).toHaveLength(before.messages + 1);
      expect(conversation.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'c1', content: 'too risky', success: false, state: { humanIntervention: { action: 'reject', reason: 'too risky' } } });
      expect(result.receipt).toMatchObject({ id: conversation.at(-1)!.id, seq: conversation.at(-1)!.seq });
      expect(result.owed).toEqual([expect.objectContaining({ point: 'onStopByHumanIntervention', toolCallId: 'c1', action: 'reject', claimedBy: 'decider-1' })]);
      expect(await interventions.get(operation.id, 'c1')).toMatchObject({ status: 'rejected', decision: 'reject', decisionReason: 'too risky' });
      expect(events.seen.map((event) => event.kind).sort()).toEqual(['intervention', 'message', 'owed', 'status']);
      expect(events.seen.find((event) => event.kind === 'status')).toMatchObject({ status: 'completed', version: operation.version + 1 });

      // The terminal sequence is owed: held by the decider's transition for a while, then a reconciler's.
      const held = await operations.claimOwedTerminalHooks('reconciler-1', HOLD_MS);
      expect(held.map((owed) => owed.id)).not.toContain(operation.id);
      advance(HOLD_MS);
      const taken = await operations.claimOwedTerminalHooks('reconciler-1', HOLD_MS);
      expect(taken.find((owed) => owed.id === operation.id)).toMatchObject({ reason: 'interrupted', leaseOwner: 'reconciler-1' });
    } finally {
      events.stop();
    }
  });

  it('G3: the owed notification row is written with the decision and claimed by the decider; a reconciler claims it only after the hold lapses', async () => {
    const operation = await waitingOn([approval('c1')]);
    const decidedAt = now.toISOString();
    const { owed } = await waits.decideDurably(operation.id, 'c1', { action: 'approve', reason: 'a-private-reason', decidedBy: 'alice' }, effects());
    const [row] = await owedWork.list(operation.id);
    expect(row).toEqual({
      id: owed[0]!.id,
      operationId: operation.id,
      point: 'afterHumanIntervention',
      toolCallId: 'c1',
      action: 'approve',
      createdAt: decidedAt,
      claimedBy: 'decider-1',
      claimedUntil: new Date(now.getTime() + HOLD_MS).toISOString(),
      attempts: 1,
    });
    // Identifiers only (DESIGN §5): no prompt, argument, reason or decider is copied into it.
    const raw: unknown[] = await db.dataSource.query(`SELECT * FROM ${db.handle.table('agent_hooks_owed_work')}`);
    const text = JSON.stringify(raw);
    for (const secret of ['a-private-reason', 'very-private', 'alice']) expect(text).not.toContain(secret);

    const claimedBy = async (owner: string) => (await owedWork.claimOwed(owner, HOLD_MS)).filter((claimed) => claimed.operationId === operation.id);
    // While the decider holds it, no reconciler gets it.
    expect(await claimedBy('reconciler-1')).toEqual([]);
    advance(HOLD_MS - 1);
    expect(await claimedBy('reconciler-1')).toEqual([]);

    // Its hold lapsed: of two reconcilers racing for it, exactly one claims it.
    advance(1);
    const race = await Promise.all([claimedBy('reconciler-1'), claimedBy('reconciler-2')]);
    expect(race.flat()).toEqual([expect.objectContaining({ id: row!.id, attempts: 2 })]);
    const holder = race[0]!.length === 1 ? 'reconciler-1' : 'reconciler-2';
    expect(race.flat()[0]!.claimedBy).toBe(holder);

    // A failed delivery lets go (only its holder can), so the next pass retries it at once.
    expect(await owedWork.release(row!.id, 'someone-else')).toBe(false);
    expect(await claimedBy('reconciler-3')).toEqual([]);
    expect(await owedWork.release(row!.id, holder)).toBe(true);
    expect(await claimedBy('reconciler-3')).toEqual([expect.objectContaining({ id: row!.id, claimedBy: 'reconciler-3', attempts: 3 })]);

    // Delivered: never claimed again, however long it waits.
    const deliveredAt = now.toISOString();
    expect(await owedWork.markDelivered(row!.id)).toBe(true);
    expect(await owedWork.markDelivered(row!.id)).toBe(false);
    advance(10 * HOLD_MS);
    expect(await claimedBy('reconciler-4')).toEqual([]);
    expect((await owedWork.list(operation.id))[0]).toMatchObject({ deliveredAt, attempts: 3 });

    // A row whose operation does not exist (any more) is never handed out.
    const orphan: OwedWorkEntity = {
      id: '00000000-0000-4000-8000-000000000013',
      operationId: '00000000-0000-4000-8000-0000000000ff',
      point: 'afterHumanIntervention',
      toolCallId: 'c1',
      action: 'approve',
      createdAt: new Date(0).toISOString(),
      claimedBy: null,
      claimedUntil: null,
      deliveredAt: null,
      attempts: 0,
    };
    await db.dataSource.createQueryBuilder().insert().into(OwedWorkEntity).values(insertValues(orphan)).execute();
    expect((await owedWork.claimOwed('reconciler-5', HOLD_MS)).map((claimed) => claimed.id)).not.toContain(orphan.id);
  });

  it('G3: a failure inside the transaction leaves neither the decision nor the resume nor the owed row', async () => {
    const operation = await waitingOn([approval('c1')]);
    const before = await snapshot(operation.id);
    const events = watchEvents(operation.id);
    try {
      // After every write (decision, owed row, resume): a throw rolls all of them back.
      failAfterStatusUpdate('after the resume');
      await expect(waits.decideDurably(operation.id, 'c1', { action: 'approve' }, effects())).rejects.toThrow(Failpoint);
      expect(await snapshot(operation.id)).toEqual(before);
      failpoint.clear();

      // A statement of the database failing after the decision was written: the owed row's unique key
      // (operation, point, call) is taken by a row planted here, so its insert is refused.
      const planted: OwedWorkEntity = {
        id: '00000000-0000-4000-8000-00000000a013',
        operationId: operation.id,
        point: 'afterHumanIntervention',
        toolCallId: 'c1',
        action: null,
        createdAt: now.toISOString(),
        claimedBy: null,
        claimedUntil: null,
        deliveredAt: now.toISOString(),
        attempts: 0,
      };
      const owedTable = db.dataSource.createQueryBuilder().insert().into(OwedWorkEntity);
      await owedTable.values(insertValues(planted)).execute();
      await expect(waits.decideDurably(operation.id, 'c1', { action: 'approve' }, effects())).rejects.toThrow();
      expect(await snapshot(operation.id)).toEqual({ ...before, owed: [expect.objectContaining({ id: planted.id })] });
      expect(events.seen).toEqual([]);
      await db.dataSource.createQueryBuilder().delete().from(OwedWorkEntity).where('"id" = :id', { id: planted.id }).execute();

      // Nothing was half-kept, so the same decision simply goes through now: no second decision is needed.
      const result = await waits.decideDurably(operation.id, 'c1', { action: 'approve' }, effects());
      expect(result).toMatchObject({ outcome: 'decided', resumed: true });
      expect(await operations.get(operation.id)).toMatchObject({ status: 'running', version: operation.version + 1 });
    } finally {
      events.stop();
    }
  });

  it('G5: a decision for a completed operation writes nothing', async () => {
    const operation = await waitingOn([approval('c1', 0), deferred('d1', 1)]);
    expect(await operations.complete(operation.id, 'interrupted')).toBe(true);
    const before = await snapshot(operation.id);
    const events = watchEvents(operation.id);
    try {
      const receipt = rejectionReceipt({ id: 'c1', identifier: 'fs', apiName: 'delete', args: ARGS }, undefined) as NewToolMessage;
      const refused = { outcome: 'operation_completed', resumed: false, completed: false, owed: [] };
      expect(await waits.decideDurably(operation.id, 'c1', { action: 'approve' }, effects())).toEqual(refused);
      expect(await waits.decideDurably(operation.id, 'c1', { action: 'rejectAndContinue' }, effects())).toEqual(refused);
      expect(await waits.decideDurably(operation.id, 'c1', { action: 'reject' }, effects({ notify: ['onStopByHumanIntervention'], receipt }))).toEqual(refused);
      const message: NewToolMessage = { role: 'tool', toolCallId: 'd1', identifier: 'fs', apiName: 'delete', content: 'done', success: true };
      expect(await waits.publishDeferred(operation.id, 'd1', { content: 'done', success: true }, message)).toEqual({ published: false, reason: 'operation_completed' });
      expect(await snapshot(operation.id)).toEqual(before);
      expect(events.seen).toEqual([]);
    } finally {
      events.stop();
    }
  });

  it('G3: a deferred result published last makes the operation runnable in the same transaction', async () => {
    const operation = await waitingOn([approval('c1', 0), deferred('d1', 1)]);
    const message: NewToolMessage = { role: 'tool', toolCallId: 'd1', identifier: 'fs', apiName: 'delete', content: 'deleted', success: true };
    const result = { content: 'deleted', success: true };
    expect(await placeholders.claim(operation.id, 'd1', 'executor-1', HOLD_MS)).toBe(true);

    // Published while an approval is still pending: no resume.
    const approved = await waits.decideDurably(operation.id, 'c1', { action: 'approve' }, effects());
    expect(approved.resumed).toBe(false);
    const waitingVersion = (await operations.get(operation.id))!.version;

    // A failure after the placeholder, the message, the completion and the resume were written: none is kept.
    const before = await snapshot(operation.id);
    failAfterStatusUpdate('after the resume');
    await expect(waits.publishDeferred(operation.id, 'd1', result, message, { claimant: 'executor-1' })).rejects.toThrow(Failpoint);
    expect(await snapshot(operation.id)).toEqual(before);
    failpoint.clear();

    const events = watchEvents(operation.id);
    try {
      const published = await waits.publishDeferred(operation.id, 'd1', result, message, { claimant: 'executor-1' });
      expect(published).toMatchObject({ published: true, resumed: true, message: { toolCallId: 'd1', content: 'deleted' } });
      expect(await operations.get(operation.id)).toMatchObject({ status: 'running', version: waitingVersion + 1 });
      expect(await placeholders.get(operation.id, 'd1')).toMatchObject({ state: 'final', result });
      expect(await interventions.get(operation.id, 'd1')).toMatchObject({ status: 'completed' });
      expect(events.seen.map((event) => event.kind).sort()).toEqual(['intervention', 'message', 'status']);
      expect(events.seen.every((event) => event.status === 'running' && event.version === waitingVersion + 1)).toBe(true);
    } finally {
      events.stop();
    }
  });

  it('G3: a received deferred result is stored with its claim; a reconciler takes it over only once the claim lapsed; the publish replaces it with the final result', async () => {
    const operation = await waitingOn([deferred('d1')]);
    const raw = { content: 'raw page with a private token', success: true };
    const receivedAt = now.toISOString();
    expect(await placeholders.claim(operation.id, 'd1', 'executor-1', HOLD_MS, raw)).toBe(true);
    expect(await placeholders.get(operation.id, 'd1')).toMatchObject({ state: 'empty', received: raw, receivedAt });
    const mine = async (owner: string) => (await placeholders.claimReceived(owner, HOLD_MS)).filter((claimed) => claimed.operationId === operation.id);

    // While the result waits, no second result is taken — not even once its decider's claim lapsed.
    expect(await placeholders.claim(operation.id, 'd1', 'executor-2', HOLD_MS, { content: 'a second post', success: true })).toBe(false);
    // Its decider renews it (without storing anything again); no reconciler takes it meanwhile.
    expect(await placeholders.claim(operation.id, 'd1', 'executor-1', HOLD_MS)).toBe(true);
    expect(await mine('reconciler-1')).toEqual([]);
    advance(HOLD_MS + 1);
    expect(await placeholders.claim(operation.id, 'd1', 'executor-2', HOLD_MS, { content: 'a second post', success: true })).toBe(false);
    expect((await placeholders.get(operation.id, 'd1'))!.received).toEqual(raw);

    // The decider died: of two reconcilers racing for its result, exactly one gets it, as it was received.
    const race = await Promise.all([mine('reconciler-1'), mine('reconciler-2')]);
    expect(race.flat()).toEqual([{ operationId: operation.id, toolCallId: 'd1', result: raw, receivedAt }]);
    const holder = race[0]!.length === 1 ? 'reconciler-1' : 'reconciler-2';
    expect(await mine('reconciler-3')).toEqual([]);

    // The dead decider's publish is refused (it lost the claim); the holder's publishes the final result.
    const message = (content: string): NewToolMessage => ({ role: 'tool', toolCallId: 'd1', identifier: 'fs', apiName: 'delete', content, success: true });
    expect(await waits.publishDeferred(operation.id, 'd1', raw, message(raw.content), { claimant: 'executor-1' })).toEqual({ published: false, reason: 'already_final' });
    const final = { content: 'page (token redacted)', success: true };
    const published = await waits.publishDeferred(operation.id, 'd1', final, message(final.content), { claimant: holder });
    expect(published).toMatchObject({ published: true, resumed: true, message: { toolCallId: 'd1', content: final.content } });
    expect(await operations.get(operation.id)).toMatchObject({ status: 'running', version: operation.version + 1 });
    const stored = (await placeholders.get(operation.id, 'd1'))!;
    expect(stored).toMatchObject({ state: 'final', result: final });
    expect(stored).not.toHaveProperty('received');
    expect(stored).not.toHaveProperty('receivedAt');
    // The raw result did not outlive the publish (the after-chain redacted it).
    const rows: unknown[] = await db.dataSource.query(`SELECT * FROM ${db.handle.table('agent_hooks_tool_result_placeholders')}`);
    expect(JSON.stringify(rows)).not.toContain('private token');
    advance(10 * HOLD_MS);
    expect(await mine('reconciler-4')).toEqual([]);
    expect(await placeholders.claim(operation.id, 'd1', 'executor-3', HOLD_MS, { content: 'late', success: true })).toBe(false);
  });

  it('G3, G5: a released claim takes its received result with it; a received result of a completed operation is dropped, never handed out', async () => {
    // The after-chain failed and its poster was told: the result goes, and the next post may be decided.
    const failed = await waitingOn([deferred('d1')]);
    expect(await placeholders.claim(failed.id, 'd1', 'executor-1', HOLD_MS, { content: 'first', success: true })).toBe(true);
    await placeholders.release(failed.id, 'd1', 'someone-else');
    expect((await placeholders.get(failed.id, 'd1'))!.received).toEqual({ content: 'first', success: true });
    await placeholders.release(failed.id, 'd1', 'executor-1');
    const released = (await placeholders.get(failed.id, 'd1'))!;
    expect(released).not.toHaveProperty('received');
    expect(released).not.toHaveProperty('receivedAt');
    expect(await placeholders.claim(failed.id, 'd1', 'executor-2', HOLD_MS, { content: 'second', success: false })).toBe(true);
    expect((await placeholders.get(failed.id, 'd1'))!.received).toEqual({ content: 'second', success: false });

    // The decider died, then the operation was cancelled: nothing of it is published (G5), and the raw
    // result is not kept.
    const cancelled = await waitingOn([deferred('d1')]);
    expect(await placeholders.claim(cancelled.id, 'd1', 'executor-1', HOLD_MS, { content: 'cancelled page', success: true })).toBe(true);
    expect(await operations.complete(cancelled.id, 'interrupted')).toBe(true);
    advance(2 * HOLD_MS);
    const claimed = await placeholders.claimReceived('reconciler-1', HOLD_MS);
    expect(claimed.map((received) => received.operationId)).not.toContain(cancelled.id);
    // The failed one's second post lapsed too (its decider is gone as well): that one is handed out.
    expect(claimed.filter((received) => received.operationId === failed.id)).toEqual([expect.objectContaining({ toolCallId: 'd1', result: { content: 'second', success: false } })]);
    const dropped = (await placeholders.get(cancelled.id, 'd1'))!;
    expect(dropped).toMatchObject({ state: 'empty' });
    expect(dropped).not.toHaveProperty('received');
    expect((await placeholders.claimReceived('reconciler-2', HOLD_MS)).map((received) => received.operationId)).not.toContain(cancelled.id);
  });

  it('G3: two deciders of the last two pending calls: exactly one resumes', async () => {
    for (let round = 0; round < 5; round += 1) {
      const operation = await waitingOn([approval('c1', 0), approval('c2', 1)]);
      const results = await Promise.all([
        waits.decideDurably(operation.id, 'c1', { action: 'approve' }, effects({ claimant: 'decider-1' })),
        waits.decideDurably(operation.id, 'c2', { action: 'rejectAndContinue' }, effects({ claimant: 'decider-2' })),
      ]);
      expect(results.map((result) => result.outcome)).toEqual(['decided', 'decided']);
      expect(results.filter((result) => result.resumed)).toHaveLength(1);
      expect(await operations.get(operation.id)).toMatchObject({ status: 'running', version: operation.version + 1 });
      expect((await owedWork.list(operation.id)).map((row) => row.claimedBy).sort()).toEqual(['decider-1', 'decider-2']);
    }
  });
});
