/**
 * The reconciler of the one durable engine (SPEC G2, DESIGN §4), in every process with the runtime and in
 * both modes: at start, then every `reconcileEveryMs`, it
 * 1. delivers the notifications owed by processes that died between a decision's commit and its hooks
 *    (`afterHumanIntervention`, `onStopByHumanIntervention`; G3), first, so that a stop's notification comes
 *    before its terminal sequence;
 * 2. finishes the deferred results received by processes that died during their after-chain (G3): the
 *    chain runs again with the stored result, which is then published, the operation runnable again;
 * 3. runs the terminal sequences owed by processes that died after an operation's terminal transition
 *    (`onComplete` and the rest, at least once, with stable webhook-ids);
 * 4. takes over running operations whose lease expired (their process died, or handed the step back at
 *    shutdown) and those nobody held that have been quiet for one lease (a process died between a
 *    commit and driving the next step, or Redis lost a job): local mode drives them here, queue mode
 *    enqueues them (the job id, operation + version, makes that idempotent while their job still exists).
 * With the defaults (lease 10 s, every 5 s) a dead process's operations move again within 15 s.
 */
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { errorType } from '../hooks/hook-errors.js';
import { OPERATION_LEASES, type OperationLeases } from './operation-leases.port.js';
import { OperationStart } from './operation-start.js';
import { OwedWork } from './owed-work.js';
import { RECOVERY_SETTINGS, type RecoverySettings } from './recovery-settings.js';

/** Operations taken over per pass; the next pass takes the rest. */
const BATCH = 100;

export interface ReconcilePass {
  /** Owed notifications delivered. */
  notifications: number;
  /** Received deferred results of dead deciders published. */
  deferredResults: number;
  /** Running operations taken over (local) or enqueued again (queue). */
  recovered: number;
  /** Owed terminal sequences run. */
  terminalSequences: number;
}

@Injectable()
export class OperationReconciler implements OnApplicationBootstrap {
  private readonly logger = new Logger('AgentHooks:Reconciler');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<ReconcilePass> | undefined;
  private stopped = false;

  constructor(
    @Inject(RECOVERY_SETTINGS) private readonly settings: RecoverySettings,
    @Inject(OPERATION_LEASES) private readonly leases: OperationLeases,
    private readonly starts: OperationStart,
    private readonly owed: OwedWork,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.reconcile(), this.settings.reconcileEveryMs);
    this.timer.unref();
    // At start: what a process that died before this one left behind.
    void this.reconcile();
  }

  /** No more passes; waits for the one running. The `ShutdownCoordinator` calls it first (G4). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  /** One pass (a pass already running is joined, not doubled). */
  reconcile(): Promise<ReconcilePass> {
    if (this.stopped) return Promise.resolve({ notifications: 0, deferredResults: 0, recovered: 0, terminalSequences: 0 });
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(): Promise<ReconcilePass> {
    const result: ReconcilePass = { notifications: 0, deferredResults: 0, recovered: 0, terminalSequences: 0 };
    // A database that does not exist yet holds nothing to recover; a pass must not create it.
    if (!this.leases.mayHoldWork()) return result;
    try {
      result.notifications = await this.owed.deliverOwedNotifications();
      result.deferredResults = await this.owed.finishReceivedDeferred();
      result.terminalSequences = await this.owed.runOwedTerminalSequences();
      // An unleased operation counts as its last writer's for one lease: time enough to drive or enqueue its
      // next step, and the same bound as an expired lease (G2: one lease plus one interval).
      const quietSince = new Date(Date.now() - this.settings.leaseMs).toISOString();
      for (const operation of await this.leases.listRecoverable(quietSince, BATCH)) {
        if (this.stopped) break;
        // Through the step scheduler: local mode drives it here, queue mode enqueues it.
        await this.starts.adopt(operation.id);
        result.recovered++;
      }
    } catch (error) {
      this.logger.warn(`reconcile pass failed (${errorType(error)})`);
    }
    return result;
  }
}
