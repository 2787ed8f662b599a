/**
 * Human decisions on an operation and the results it waits for: approve (with edited arguments, F6), reject
 * (stop, or continue with the rejection as the result), cancel, and a deferred call's result (L4). A
 * decision and "runnable again" commit together (G3); of two processes resolving the last pending items at
 * once, exactly one resumes it. The owed notification (`afterHumanIntervention` /
 * `onStopByHumanIntervention`) is delivered after the commit, by the decider, which claimed it; if the
 * decider dies, the reconciler's `OwedWork` delivers it. The operation then goes on through its
 * `StepHost` (`OperationStart`), or, for a stop, ends in the `TerminalTransition`.
 */
import { Inject, Injectable } from '@nestjs/common';
import { AgentTracer } from '../tracing/agent-tracer.js';
import { ApprovalEdits } from './approval-edits.js';
import { claimantId } from './claimant-ids.js';
import { DeferredResults, type GoOn } from './deferred-results.js';
import { existingOperation } from './existing-operation.js';
import { InterventionNotifier, type DecisionDetail, type NotificationClaim } from './intervention-notifier.js';
import { rejectionReceipt } from './intervention-receipts.js';
import type { LiveOperation } from './live-operation.js';
import { LiveOperations } from './live-operations.js';
import { OperationStart } from './operation-start.js';
import { RECOVERY_SETTINGS, type RecoverySettings } from './recovery-settings.js';
import { InterventionNotPendingError, OperationCompletedError, RunCancelledError, RuntimeShuttingDownError, UnknownInterventionError } from './runtime-errors.js';
import {
  RUNTIME_STORE,
  type DurableDecision,
  type DurableDeferredPublish,
  type InterventionAction,
  type OwedNotificationPoint,
  type RuntimeStore,
  type StoredIntervention,
  type StoredOperation,
  type ToolMessage,
} from './runtime-store.port.js';
import { LeaseHolder } from './lease-holder.js';
import { StepDrain } from './step-drain.js';
import { StepExecutor } from './step-executor.js';
import { TerminalTransition } from './terminal-transition.js';

/** Internal: not exported from the package; hosts use `AgentRuntime`. */
@Injectable()
export class HumanDecisions {
  /** How a received result that made the operation runnable again lets it go on. */
  private readonly goOnHere: GoOn = (operationId, live) => this.host.goOn(operationId, live);

  constructor(
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
    @Inject(RECOVERY_SETTINGS) private readonly recovery: RecoverySettings,
    private readonly live: LiveOperations,
    /** G4: no decision is taken once the app closes. */
    private readonly shutdown: StepDrain,
    private readonly notifier: InterventionNotifier,
    private readonly edits: ApprovalEdits,
    private readonly executor: StepExecutor,
    private readonly deferred: DeferredResults,
    /** Where a decided operation goes on (the `StepHost`), and where a stopped one ends. */
    private readonly host: OperationStart,
    private readonly transition: TerminalTransition,
    private readonly tracer: AgentTracer,
    /** Its `instanceId` prefixes the claims this process makes (`claimant-ids.ts`). */
    private readonly leases: LeaseHolder,
  ) {}

  /**
   * Approves a pending call (SPEC A3), with edited `args` checked first (F6): it runs, through every hook, when the operation resumes. The decision,
   * "runnable again" and the owed `afterHumanIntervention` commit together (G3); the hook is delivered after the commit, then the operation goes on.
   */
  async approve(operationId: string, toolCallId: string, options: { decidedBy?: string; args?: Record<string, unknown> } = {}): Promise<void> {
    const args = options.args === undefined ? undefined : await this.edits.check(operationId, toolCallId, options.args);
    const { operation, item, decided, claim } = await this.decide(operationId, toolCallId, { action: 'approve', ...(options.decidedBy !== undefined ? { decidedBy: options.decidedBy } : {}), ...(args ? { args } : {}) }, 'afterHumanIntervention');
    await this.notifyThenGoOn(operation, item, this.live.ensure(operation), decided, claim, args ? { argsEdited: true } : {});
  }

  /**
   * Rejects a pending call. By default the operation stops (`onStopByHumanIntervention`, reason
   * `interrupted`): the decision, the rejection receipt and the terminal transition commit together and the
   * terminal sequence follows. With `continue: true` the reason becomes the call's result and the run goes on.
   */
  async reject(operationId: string, toolCallId: string, options: { reason?: string; continue?: boolean; decidedBy?: string } = {}): Promise<void> {
    const decision = {
      action: options.continue ? ('rejectAndContinue' as const) : ('reject' as const),
      ...(options.reason !== undefined ? { reason: options.reason } : {}),
      ...(options.decidedBy !== undefined ? { decidedBy: options.decidedBy } : {}),
    };
    const reason = options.reason !== undefined ? { rejectionReason: options.reason } : {};
    if (options.continue) {
      const { operation, item, decided, claim } = await this.decide(operationId, toolCallId, decision, 'afterHumanIntervention');
      const live = this.live.ensure(operation);
      await this.notifyThenGoOn(operation, item, live, decided, claim, reason);
      return;
    }
    const holder = this.transition.holder();
    // This process runs the stop's terminal sequence: its own completion event must not settle `done` (and
    // drop the caller hooks) before `onStopByHumanIntervention` and `onComplete` ran.
    const early = this.live.get(operationId);
    early?.beginFinishing();
    let committed;
    try {
      committed = await this.decide(operationId, toolCallId, decision, 'onStopByHumanIntervention', holder);
    } catch (error) {
      early?.cancelFinishing();
      throw error;
    }
    const { operation, item, decided, claim } = committed;
    const live = this.live.ensure(operation);
    live.beginFinishing();
    // Held from the commit on, so a slow notification does not let a reconciler run the sequence too.
    const holding = decided.completed ? this.transition.hold(operationId, holder) : undefined;
    // A step of this process still running (the decision landed before it paused) stops at its next commit.
    // The notification and the terminal sequence belong to the operation's trace (O3), not the decider's.
    await this.tracer.segment(operation, async () => {
      try {
        await this.notifier.deliverOwned(operation, item, live.runContext, decided.owed, reason, claim);
      } finally {
        await this.transition.afterTransition(operationId, live, 'interrupted', undefined, decided.completed ? holder : undefined, this.host.reportToParent, holding);
      }
    });
  }

  /**
   * Cancels an operation: the signal reaches the model call, the tool and the webhooks of a running step;
   * a waiting operation ends at once. Either way the terminal sequence runs once, reason `interrupted`.
   */
  async cancel(operationId: string): Promise<void> {
    const operation = await existingOperation(this.store, operationId);
    if (operation.status === 'completed') return;
    const live = this.live.ensure(operation);
    if (live.stepLoopHere) {
      live.controller.abort(new RunCancelledError(operationId));
      return;
    }
    // The operation's caller hooks, restored if this process never had them (L2): its terminal sequence is
    // theirs too, and whether anything observes it decides whether the transition leaves it owed.
    await this.executor.restoreCallerHooks(operationId);
    await this.host.finish(operationId, live, 'interrupted');
  }

  /**
   * The result of a deferred call arrives (L4, P3, P4): its after-chain, then the compare-and-set publish;
   * the first final write wins. If the publish made the operation runnable again, it goes on.
   */
  completeDeferred(operationId: string, toolCallId: string, result: { content: string; success?: boolean }): Promise<{ published: true }> {
    return this.host.completeDeferred(operationId, toolCallId, result);
  }

  /**
   * SPEC G3, for `OwedWork.finishReceivedDeferred`: a received result whose decider died, claimed by
   * `claimant`, is decided and published like a posted one, and the operation goes on from here if resumed.
   */
  finishReceived(operation: StoredOperation, item: StoredIntervention, result: { content: string; success?: boolean }, claimant: string): Promise<DurableDeferredPublish> {
    return this.deferred.finishReceived(operation, item, result, claimant, this.goOnHere);
  }

  /**
   * Checks that the call waits for a human decision and commits the decision once, with what it makes
   * happen (G3): the owed notification (claimed by this process), "runnable again" or, for a stop, the
   * receipt and the terminal transition (held by `terminalHolder`).
   */
  private async decide(
    operationId: string,
    toolCallId: string,
    decision: { action: InterventionAction; reason?: string; decidedBy?: string },
    notify: OwedNotificationPoint,
    terminalHolder?: string,
  ): Promise<{ operation: StoredOperation; item: StoredIntervention; decided: DurableDecision; claim: NotificationClaim }> {
    if (this.shutdown.stopped) throw new RuntimeShuttingDownError();
    const [operation, items] = await Promise.all([existingOperation(this.store, operationId), this.store.interventions(operationId)]);
    const item = items.find((i) => i.toolCallId === toolCallId && i.kind === 'approval');
    if (!item) throw new UnknownInterventionError(operationId, toolCallId, 'approval');
    // A decided item stays `not_pending` after the end; an open one of a completed operation is G5's.
    if (item.status !== 'pending') throw new InterventionNotPendingError(operationId, toolCallId);
    if (operation.status === 'completed') throw new OperationCompletedError(operationId, toolCallId);
    const call = { id: item.toolCallId, identifier: item.identifier, apiName: item.apiName, args: item.args };
    // The owed notification is inserted claimed by this decision, which renews the claim while it delivers.
    const claim: NotificationClaim = { owner: claimantId(this.leases.instanceId, 'owed'), holdMs: this.recovery.leaseMs };
    const decided = await this.store.decideDurably(operationId, toolCallId, decision, {
      notify: [notify],
      claimant: claim.owner,
      holdMs: claim.holdMs,
      // The stop receipt holds no tool output: published directly (P2), with the terminal transition.
      ...(decision.action === 'reject' ? { receipt: rejectionReceipt(call, decision.reason) as ToolMessage } : {}),
      ...(terminalHolder !== undefined ? { terminalHold: { owner: terminalHolder, ms: this.recovery.leaseMs } } : {}),
    });
    if (decided.outcome === 'operation_completed') throw new OperationCompletedError(operationId, toolCallId);
    if (decided.outcome === 'not_pending') throw new InterventionNotPendingError(operationId, toolCallId);
    // The operation's caller hooks, restored if this process never had them (L2).
    await this.executor.restoreCallerHooks(operationId);
    return { operation, item, decided, claim };
  }

  /**
   * After a decision that made the operation runnable: its lease is taken first (local mode), so no
   * reconciler drives the approved call while a slow `afterHumanIntervention` is still being delivered;
   * then the notification; then the step, under that lease. Nothing observing the notification, the step
   * goes on at once and the decider does not wait for the owed row's record. The decision is committed: a
   * failing hook (a `fallback: 'none'` delivery) must not leave the run stuck — it goes on, and the error
   * reaches the caller.
   */
  private notifyThenGoOn(operation: StoredOperation, item: StoredIntervention, live: LiveOperation, decided: DurableDecision, claim: NotificationClaim, detail: DecisionDetail): Promise<void> {
    const notify = () => this.notifier.deliverOwned(operation, item, live.runContext, decided.owed, detail, claim);
    // Unobserved (E3): the owed rows committed with the decision (G3) are recorded delivered beside the step, unawaited.
    const unobserved = !this.notifier.observed(operation.id, live.runContext, decided.owed);
    // In the operation's trace (O3): the notification's traceparent and the steps it lets go on.
    return this.tracer.segment(operation, () => {
      if (unobserved) this.shutdown.track(notify());
      if (decided.resumed) return unobserved ? this.host.goOn(operation.id, live) : this.host.goOnAfter(notify, operation.id, live);
      return unobserved ? Promise.resolve() : notify();
    });
  }
}
