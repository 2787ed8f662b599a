/**
 * The work a dead process owed, taken over by the `OperationReconciler` of a surviving one (SPEC G2, G3):
 * notifications of committed decisions, deferred results received but not finished, and terminal
 * sequences of operations already completed. Each item is claimed in the database first, one at a time,
 * and the claim renewed while its work runs, so two processes never run one item at once; a pass takes at
 * most `OWED_PER_PASS` of each kind, the next pass the rest.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import { errorType } from '../hooks/hook-errors.js';
import { HookRegistry } from '../hooks/hook-registry.js';
import { claimantId } from './claimant-ids.js';
import { DeferredClaim, deferredRetryDelayMs } from './deferred-claim.js';
import { InterventionNotifier, type DecisionDetail } from './intervention-notifier.js';
import { LeaseHolder } from './lease-holder.js';
import { restoredLive } from './live-operation.js';
import { LiveOperations } from './live-operations.js';
import { resultOf } from './operation-result.js';
import { HumanDecisions } from './human-decisions.js';
import { AgentTracer } from '../tracing/agent-tracer.js';
import { RECOVERY_SETTINGS, type RecoverySettings } from './recovery-settings.js';
import { restoredContext } from './run-context-snapshot.js';
import { RunFailedError } from './runtime-errors.js';
import { RUNTIME_STORE, type DurableDeferredPublish, type RuntimeStore, type StoredIntervention } from './runtime-store.port.js';
import { StepDrain } from './step-drain.js';
import { StepExecutor } from './step-executor.js';
import { TerminalSequence, type ParentReport } from './terminal-sequence.js';

/** Owed items of each kind one reconcile pass takes; the next pass takes the rest. */
export const OWED_PER_PASS = 50;

@Injectable()
export class OwedWork {
  private readonly logger = new Logger('AgentRuntime');
  /** A child's answer reaches its parent like a posted deferred result. */
  private readonly reportToParent: ParentReport = (parentOperationId, parentToolCallId, result) => this.decisions.completeDeferred(parentOperationId, parentToolCallId, result);

  constructor(
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
    private readonly registry: HookRegistry,
    private readonly executor: StepExecutor,
    private readonly leases: LeaseHolder,
    @Inject(RECOVERY_SETTINGS) private readonly recovery: RecoverySettings,
    private readonly notifier: InterventionNotifier,
    private readonly terminal: TerminalSequence,
    private readonly live: LiveOperations,
    private readonly shutdown: StepDrain,
    private readonly decisions: HumanDecisions,
    /** What a dead process owed still belongs to its operation's trace (SPEC O3). */
    private readonly tracer: AgentTracer,
  ) {}

  /**
   * Delivers notifications owed by processes that died between a decision's commit and its delivery (the
   * reconciler calls this first, so a stop's `onStopByHumanIntervention` comes before its terminal sequence).
   * At least once, with the webhook-id of the first attempt. Returns how many were delivered.
   */
  async deliverOwedNotifications(): Promise<number> {
    let delivered = 0;
    // One claim at a time (see `runOwedTerminalSequences`).
    for (let taken = 0; taken < OWED_PER_PASS && !this.shutdown.stopped; taken++) {
      const owner = claimantId(this.leases.instanceId, 'owed');
      const [notification] = await this.store.claimOwedNotifications(owner, this.recovery.leaseMs, 1);
      if (!notification) break;
      const operation = await this.store.getOperation(notification.operationId);
      if (!operation) continue;
      const item = (await this.store.interventions(operation.id)).find((i) => i.toolCallId === notification.toolCallId);
      const restoredHere = !this.registry.hasCallerHooks(operation.id);
      try {
        await this.executor.restoreCallerHooks(operation.id);
        const at = item ? { ...operation, stepIndex: item.stepIndex } : operation;
        const claim = { owner, holdMs: this.recovery.leaseMs };
        await this.tracer.segment(operation, () => this.notifier.whileClaimed(notification, claim, () => this.notifier.notify(at, restoredContext(operation.id, operation.runContext), notification, decisionDetail(item))));
        await this.store.markNotificationDelivered(notification.id);
        delivered++;
      } catch (error) {
        // The hook ran and failed under its own policy, or the database failed: the next pass tries again.
        this.logger.warn(`owed ${notification.point} of ${operation.id} failed (${errorType(error)})`);
        await this.store.releaseNotification(notification.id, owner).catch(() => undefined);
      } finally {
        if (restoredHere && !this.live.has(operation.id)) this.registry.unregister(operation.id);
      }
    }
    return delivered;
  }

  /**
   * SPEC G3: finishes deferred results received by a process that died during their after-chain (the
   * reconciler calls this after the owed notifications). Each stored result whose claim lapsed is claimed
   * here (one at a time, renewed while its chain runs, so no two deciders run one chain at once), its caller
   * hooks are restored, the after-chain runs with the stored result and the outcome is published like a
   * posted one — the operation made runnable again in the same transaction, then driven (local) or
   * scheduled (queue). A failure leaves the result stored, tried again after a wait as long as its age (one
   * lease to ten minutes: `deferredRetryDelayMs`). Returns how
   * many were published.
   */
  async finishReceivedDeferred(): Promise<number> {
    let published = 0;
    for (let taken = 0; taken < OWED_PER_PASS && !this.shutdown.stopped; taken++) {
      const claimant = claimantId(this.leases.instanceId, 'deferred');
      const [received] = await this.store.claimReceivedDeferred(claimant, this.recovery.leaseMs, 1);
      if (!received) break;
      const { operationId, toolCallId } = received;
      const claim = DeferredClaim.held(this.store, operationId, toolCallId, claimant, this.recovery.leaseMs);
      const restoredHere = !this.registry.hasCallerHooks(operationId);
      let outcome: DurableDeferredPublish | undefined;
      let retryAfterMs: number | undefined;
      try {
        const operation = await this.store.getOperation(operationId);
        const item = (await this.store.interventions(operationId)).find((i) => i.toolCallId === toolCallId && i.kind === 'deferred');
        if (operation && item) {
          // Resumed by this commit: driven (or scheduled) here, as after a posted result.
          outcome = await this.decisions.finishReceived(operation, item, received.result, claimant);
          if (outcome.outcome === 'published') published++;
        }
      } catch (error) {
        retryAfterMs = deferredRetryDelayMs(received.receivedAt, this.recovery.leaseMs);
        this.logger.warn(`received deferred result of ${operationId} could not be finished (${errorType(error)}); tried again in ${Math.round(retryAfterMs / 1000)} s`);
      } finally {
        // Published: nothing to release. Refused (already final, operation completed) or nothing to decide
        // it for: the result goes. Failed: kept, and tried again after a wait that grows with its age.
        await claim.end(outcome?.outcome === 'published', retryAfterMs !== undefined ? { retryAfterMs } : {});
        if (restoredHere && !this.live.has(operationId)) this.registry.unregister(operationId);
      }
    }
    return published;
  }

  /**
   * Runs the terminal sequences owed by processes that died between an operation's terminal transition
   * and the end of its terminal hooks (the reconciler calls this, in every mode). Each owed operation is
   * claimed in the database first and the claim renewed while it runs, so two processes never run one at
   * once. Returns how many ran.
   */
  async runOwedTerminalSequences(): Promise<number> {
    let ran = 0;
    // One claim at a time, each renewed while it runs: a batch claimed at once would lapse behind a slow hook.
    for (let taken = 0; taken < OWED_PER_PASS && !this.shutdown.stopped; taken++) {
      const owner = claimantId(this.leases.instanceId);
      const [operation] = await this.store.claimOwedTerminalHooks(owner, this.recovery.leaseMs, 1);
      if (!operation) break;
      ran++;
      const stopHolding = this.leases.holdTerminal(operation.id, owner);
      const reason = operation.reason ?? 'done';
      const live = restoredLive(operation);
      const error = reason === 'error' ? new RunFailedError(operation.id, operation.errorType ?? 'Error') : undefined;
      const restoredHere = !this.registry.hasCallerHooks(operation.id);
      try {
        await this.executor.restoreCallerHooks(operation.id);
        await this.tracer.segment(operation, () => this.terminal.hooks(operation.id, live, reason, error));
      } catch (failure) {
        this.logger.warn(`owed terminal hooks of ${operation.id} failed (${errorType(failure)})`);
      } finally {
        if (restoredHere) this.registry.unregister(operation.id);
      }
      try {
        await this.terminal.after(operation, await resultOf(this.store, operation.id, reason), this.reportToParent);
      } finally {
        stopHolding();
      }
      // A process still waiting on this operation learns of it from the database (its watcher).
    }
    return ran;
  }
}

/** What a stored decision said beyond its action, for its redelivered notification (the same event each time). */
function decisionDetail(item: StoredIntervention | undefined): DecisionDetail {
  return { ...(item?.decisionReason !== undefined ? { rejectionReason: item.decisionReason } : {}), ...(item?.editedArgs !== undefined ? { argsEdited: true } : {}) };
}
