/**
 * SPEC G3 through the runtime: a process that dies right after a decision committed — before its
 * `afterHumanIntervention` / `onStopByHumanIntervention` ran and before the next step — loses nothing. The
 * death is the decision committed by a decider that never comes back (`decideDurably` with a claimant of
 * no process and a hold that lapses); the app's reconciler then delivers the owed notification once and
 * drives the operation (or runs the owed terminal sequence), and approving again is `not_pending`.
 * Likewise a deferred result received by a process that died during its after-chain: it was stored with the
 * claim (`claimDeferred` with a result, a claimant of no process and a lapsed hold); the reconciler runs the
 * after-chain with it and publishes, and posting again is `already_completed`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { AlreadyCompletedError, InterventionNotPendingError } from '../../../src/index.js';
import { rejectionReceipt } from '../../../src/runtime/intervention-receipts.js';
import { RuntimeDatabase } from '../../../src/persistence/runtime-database.js';
import { OperationReconciler } from '../../../src/runtime/operation-reconciler.js';
import type { ToolMessage } from '../../../src/runtime/runtime-store.port.js';
import { bootRuntime, eventOf, eventually, pointsOf, rejectionOf, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { HUMAN_LOOP_CONFIG, HumanLoopTools, executions, untilOperation, waiting } from './human-loop-kit.js';

let app: RuntimeApp;
/** A caller's result policy (an `afterToolCall` webhook): records what it saw, answers `verdicts` in turn (else 204). */
let policy: Server;
let policyUrl: string;
const policySaw: Array<{ hookType?: string; result?: { content?: string } }> = [];
const verdicts: Array<{ decision: 'allow' | 'deny'; reason?: string }> = [];
beforeAll(async () => {
  policy = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      policySaw.push(JSON.parse(body));
      const verdict = verdicts.shift();
      if (verdict) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(verdict));
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => policy.listen(0, '127.0.0.1', resolve));
  policyUrl = `http://127.0.0.1:${(policy.address() as AddressInfo).port}/policy`;
});
afterAll(() => new Promise((resolve) => policy.close(resolve)));
beforeEach(async () => {
  executions.write = 0;
  policySaw.length = 0;
  verdicts.length = 0;
  // Passes only when the test asks: nothing but the test's own pass may deliver what the dead decider owed.
  app = await bootRuntime({
      observe: true,
    config: HUMAN_LOOP_CONFIG,
    providers: [HumanLoopTools],
    webhooks: { allowNetworks: ['127.0.0.1/32'] },
    module: { recovery: { leaseMs: 300, reconcileEveryMs: 3_600_000 } },
  });
});
afterEach(() => app.close());

const reconcile = () => app.moduleRef.get(OperationReconciler).reconcile();

/** A decider that commits and dies: its claim on the owed rows lapses at once. */
const DEAD = { claimant: 'dead-process:1', holdMs: -1_000 };

async function pendingApproval() {
  const { operationId, done } = await app.runtime.execAgent({ agentId: 'writer', prompt: 'write the report' });
  const paused = await untilOperation(app.store, operationId, waiting);
  const toolCallId = (await app.store.interventions(operationId))[0]!.toolCallId;
  return { operationId, done, toolCallId, paused };
}

// The takeovers wait for a lease to lapse and a reconcile pass: give a loaded CI machine room.
jest.setTimeout(30_000);

describe('G3 durable decisions through the runtime', () => {
  it('G3: an approval committed by a process that died is delivered and resumed by the reconciler; approving again is not_pending', async () => {
    const { operationId, done, toolCallId } = await pendingApproval();
    const decided = await app.store.decideDurably(operationId, toolCallId, { action: 'approve' }, { notify: ['afterHumanIntervention'], ...DEAD });
    expect(decided).toMatchObject({ outcome: 'decided', resumed: true });
    expect(pointsOf(app.events, operationId, ['afterHumanIntervention'])).toEqual([]);
    // The approval is not lost: a second one would be a second decision.
    expect(await rejectionOf(app.runtime.approve(operationId, toolCallId))).toBeInstanceOf(InterventionNotPendingError);

    expect((await reconcile()).notifications).toBe(1);
    expect(pointsOf(app.events, operationId, ['afterHumanIntervention'])).toEqual(['afterHumanIntervention']);
    // Running with nobody driving: taken over once it has been quiet for one lease.
    await eventually(async () => (await reconcile()).recovered === 1, 'the takeover of the resumed operation');
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: 'wrote: written /tmp/report.txt' });
    expect(executions.write).toBe(1);
    expect(pointsOf(app.events, operationId, ['afterHumanIntervention', 'onComplete'])).toEqual(['afterHumanIntervention', 'onComplete']);
    expect(eventOf(app.events, operationId, 'afterHumanIntervention')?.payload).toMatchObject({ action: 'approve', toolCallId });
    // Delivered once: a later pass finds nothing owed.
    expect((await reconcile()).notifications).toBe(0);
  });

  it('G3: a rejection committed by a process that died delivers onStopByHumanIntervention before the owed terminal sequence', async () => {
    const { operationId, done, toolCallId } = await pendingApproval();
    const item = (await app.store.interventions(operationId))[0]!;
    const receipt = rejectionReceipt({ id: toolCallId, identifier: item.identifier, apiName: item.apiName, args: item.args }, 'not today') as ToolMessage;
    const decided = await app.store.decideDurably(operationId, toolCallId, { action: 'reject', reason: 'not today' }, {
      notify: ['onStopByHumanIntervention'],
      receipt,
      terminalHold: { owner: DEAD.claimant, ms: -1_000 },
      ...DEAD,
    });
    expect(decided).toMatchObject({ outcome: 'decided', completed: true });
    expect(await reconcile()).toMatchObject({ notifications: 1, terminalSequences: 1 });
    expect(await within(done, 'done')).toMatchObject({ reason: 'interrupted' });
    expect(pointsOf(app.events, operationId, ['onStopByHumanIntervention', 'onComplete'])).toEqual(['onStopByHumanIntervention', 'onComplete']);
    expect(eventOf(app.events, operationId, 'onStopByHumanIntervention')?.payload).toMatchObject({ toolCallId, rejectionReason: 'not today' });
    expect(executions.write).toBe(0);
    const tools = (await app.store.messages(operationId)).filter((m) => m.role === 'tool');
    expect(tools).toEqual([expect.objectContaining({ toolCallId, content: 'not today' })]);
  });

  it('G3: a deferred result received by a process that died during its after-chain is published by the reconciler; posting again is already_completed', async () => {
    const hooks = [{ id: 'result-policy', type: 'afterToolCall' as const, webhook: { url: policyUrl, responseHandling: 'toolCall' as const, onError: 'block' as const } }];
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'browser', prompt: 'open it', hooks });
    await untilOperation(app.store, operationId, waiting);
    const toolCallId = (await app.store.interventions(operationId))[0]!.toolCallId;
    // The dead process stored the result it received with its claim, then died during the after-chain: its
    // claim has lapsed. Only the database has the caller's policy now (the handlers of this process are gone).
    expect(await app.store.claimDeferred(operationId, toolCallId, DEAD.claimant, -1_000, { content: 'SECRET PAGE', success: true })).toBe(true);
    app.registry.unregister(operationId);

    // The result is not lost: a second post would be a second result.
    expect(await rejectionOf(app.runtime.completeDeferred(operationId, toolCallId, { content: 'a second post', success: true }))).toBeInstanceOf(AlreadyCompletedError);
    expect(policySaw).toEqual([]);
    expect((await app.store.messages(operationId)).filter((m) => m.role === 'tool')).toEqual([]);

    verdicts.push({ decision: 'deny', reason: 'page withheld' });
    expect((await reconcile()).deferredResults).toBe(1);
    // The after-chain ran once, with the caller's policy restored from the database and the stored result.
    expect(policySaw).toEqual([expect.objectContaining({ hookType: 'afterToolCall', result: expect.objectContaining({ content: 'SECRET PAGE', success: true }) })]);
    // The publish made it runnable again in its own transaction; the reconciler's process drives it.
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: 'page: page withheld' });
    const tools = (await app.store.messages(operationId)).filter((m) => m.role === 'tool');
    expect(tools).toEqual([expect.objectContaining({ toolCallId, content: 'page withheld', error: 'hook_denied' })]);
    expect(JSON.stringify(await app.store.messages(operationId))).not.toContain('SECRET PAGE');
    expect(await app.store.placeholderState(operationId, toolCallId)).toBe('final');
    expect(pointsOf(app.events, operationId, ['afterToolCall', 'onComplete'])).toEqual(['afterToolCall', 'onComplete']);

    // Published once: posting again is already_completed, and a later pass finds nothing to finish.
    expect(await rejectionOf(app.runtime.completeDeferred(operationId, toolCallId, { content: 'a late post', success: true }))).toBeInstanceOf(AlreadyCompletedError);
    expect((await reconcile()).deferredResults).toBe(0);
    expect(policySaw).toHaveLength(1);
  });

  it('G3: a received deferred result whose finishing keeps failing stays stored and waits as long as its age before the next try, not one lease', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'browser', prompt: 'open it' });
    await untilOperation(app.store, operationId, waiting);
    const toolCallId = (await app.store.interventions(operationId))[0]!.toolCallId;
    expect(await app.store.claimDeferred(operationId, toolCallId, DEAD.claimant, -1_000, { content: 'the page', success: true })).toBe(true);
    // It was received five minutes ago, and the database refuses its publish once (an outage).
    const { dataSource } = await app.moduleRef.get(RuntimeDatabase).stores();
    const placeholders = 'agent_hooks_tool_result_placeholders';
    const fiveMinutesAgo = new Date(Date.now() - 5 * 60_000).toISOString();
    await dataSource.query(`UPDATE ${placeholders} SET received_at = ? WHERE operation_id = ? AND tool_call_id = ?`, [fiveMinutesAgo, operationId, toolCallId]);
    const publish = jest.spyOn(app.store, 'publishDeferredDurably').mockRejectedValueOnce(new Error('the database is gone'));

    const tried = Date.now();
    expect((await reconcile()).deferredResults).toBe(0);
    expect(publish).toHaveBeenCalledTimes(1);
    // Kept (nobody has to post it again), and held for about its age — five minutes, not one 300 ms lease.
    const [row] = (await dataSource.query(`SELECT claimed_until, received_at FROM ${placeholders} WHERE operation_id = ? AND tool_call_id = ?`, [operationId, toolCallId])) as Array<{ claimed_until: string; received_at: string }>;
    expect(row!.received_at).toBe(fiveMinutesAgo);
    expect(Date.parse(row!.claimed_until) - tried).toBeGreaterThan(4 * 60_000);
    expect(Date.parse(row!.claimed_until) - tried).toBeLessThanOrEqual(10 * 60_000 + 60_000);
    expect(await rejectionOf(app.runtime.completeDeferred(operationId, toolCallId, { content: 'a second post', success: true }))).toBeInstanceOf(AlreadyCompletedError);

    // Once that wait is over, the next pass finishes it with the stored result.
    await dataSource.query(`UPDATE ${placeholders} SET claimed_until = ? WHERE operation_id = ? AND tool_call_id = ?`, [new Date(Date.now() - 1_000).toISOString(), operationId, toolCallId]);
    expect((await reconcile()).deferredResults).toBe(1);
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: 'page: the page' });
    expect(publish).toHaveBeenCalledTimes(2);
  });

  it('G3: a live approval delivers afterHumanIntervention once and leaves nothing owed', async () => {
    const { operationId, done, toolCallId } = await pendingApproval();
    await app.runtime.approve(operationId, toolCallId);
    expect((await within(done, 'done')).reason).toBe('done');
    expect(await reconcile()).toMatchObject({ notifications: 0, terminalSequences: 0 });
    expect(pointsOf(app.events, operationId, ['afterHumanIntervention'])).toEqual(['afterHumanIntervention']);
  });
});

describe('G3 / E3 a decision nothing observes', () => {
  let quiet: RuntimeApp;
  beforeEach(async () => {
    // No subscriber: nothing in this app observes afterHumanIntervention.
    quiet = await bootRuntime({ config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools], observe: false, module: { recovery: { leaseMs: 300, reconcileEveryMs: 3_600_000 } } });
  });
  afterEach(() => quiet.close());

  it('G3: an unobserved approval still commits its owed row with the decision, the run goes on, and the row is recorded delivered (nothing left for a reconciler)', async () => {
    const { operationId, done } = await quiet.runtime.execAgent({ agentId: 'writer', prompt: 'write the report' });
    await untilOperation(quiet.store, operationId, waiting);
    const toolCallId = (await quiet.store.interventions(operationId))[0]!.toolCallId;
    await quiet.runtime.approve(operationId, toolCallId);
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: 'wrote: written /tmp/report.txt' });
    const { owed } = await quiet.moduleRef.get(RuntimeDatabase).stores();
    // The row the decision committed (G3), recorded delivered by the decider, not left to lapse.
    await eventually(async () => (await owed.list(operationId)).every((row) => row.deliveredAt !== undefined), 'the owed row recorded delivered');
    expect(await owed.list(operationId)).toEqual([expect.objectContaining({ point: 'afterHumanIntervention', toolCallId, action: 'approve' })]);
    expect(await quiet.moduleRef.get(OperationReconciler).reconcile()).toMatchObject({ notifications: 0 });
    expect(quiet.events).toEqual([]);
  });
});
