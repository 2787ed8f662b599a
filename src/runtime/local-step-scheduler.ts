/**
 * Local mode's `StepScheduler`: the operation's steps run in this process while it holds the operation's
 * lease (SPEC G2), so two processes on one database never run one operation's step at once, and a process
 * that dies leaves a lease that expires and is taken over by a reconciler. Driving ends at a pause (the
 * pause frees the lease), a terminal reason, a lease another process took (it drives from there), or
 * shutdown (G4: the step is handed back).
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { TerminalReason } from '../hooks/agent-events.js';
import { errorType } from '../hooks/hook-errors.js';
import { LeaseHolder, type HeldLease } from './lease-holder.js';
import { LiveOperation, restoredLive } from './live-operation.js';
import { LiveOperations } from './live-operations.js';
import { RuntimeShuttingDownError } from './runtime-errors.js';
import { RUNTIME_STORE, type NewOperationLease, type RuntimeStore, type StoredOperation } from './runtime-store.port.js';
import { StepDrain } from './step-drain.js';
import { StepExecutor } from './step-executor.js';
import type { StepHost, StepScheduler } from './step-scheduler.port.js';
import { neverStarted } from './run-start.js';

@Injectable()
export class LocalStepScheduler implements StepScheduler {
  private readonly logger = new Logger('AgentRuntime');

  constructor(
    private readonly executor: StepExecutor,
    private readonly leases: LeaseHolder,
    private readonly live: LiveOperations,
    /** G4: whether the app closes, the signals steps see, the work the drain waits for. */
    private readonly shutdown: StepDrain,
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
  ) {}

  leaseAtCreate(): NewOperationLease {
    return this.leases.leaseAtCreate();
  }

  begin(operationId: string, live: LiveOperation, host: StepHost, created?: { operation: StoredOperation; leaseOwner: string }): void {
    this.shutdown.track(this.drive(operationId, live, host, true, created ? this.leases.heldSinceCreate(created.operation, created.leaseOwner) : undefined));
  }

  goOn(operationId: string, live: LiveOperation, host: StepHost): Promise<void> {
    if (this.shutdown.stopped) return Promise.resolve();
    if (live.stepLoopHere) live.requestResume();
    else this.shutdown.track(this.drive(operationId, live, host, false));
    return Promise.resolve();
  }

  async goOnAfter(notify: () => Promise<void>, operationId: string, live: LiveOperation, host: StepHost): Promise<void> {
    // Held across the notification, so no other process resumes the operation meanwhile; not marked for
    // the step, which reads the operation after it (a cancel during a slow webhook must stop the step).
    const lease = !this.shutdown.stopped && !live.stepLoopHere ? await this.leases.hold(operationId, { stepFollows: false }).catch(() => null) : null;
    try {
      await notify();
    } finally {
      if (!lease) await this.goOn(operationId, live, host);
      else if (this.shutdown.stopped) await lease.handBack();
      else this.shutdown.track(this.drive(operationId, live, host, false, lease));
    }
  }

  /** A no-op while this process drives the operation already or is closing. */
  adopt(operationId: string, host: StepHost): Promise<void> {
    if (this.shutdown.stopped || this.live.get(operationId)?.stepLoopHere) return Promise.resolve();
    this.shutdown.track(
      this.store.getOperation(operationId).then((operation) => {
        if (!operation || operation.status !== 'running' || this.shutdown.stopped) return;
        const live = this.live.get(operationId) ?? restoredLive(operation);
        if (live.stepLoopHere) return;
        this.live.add(operationId, live);
        // Its creator died before `on_run_start` committed: it runs here first.
        return this.drive(operationId, live, host, neverStarted(operation));
      }),
    );
    return Promise.resolve();
  }

  private async drive(operationId: string, live: LiveOperation, host: StepHost, fresh: boolean, held?: HeldLease): Promise<void> {
    live.beginDriving();
    // A cancel or a takeover by another process reaches this step through the operation's events (a fresh
    // one was just created here: nothing to read first).
    this.live.watch(operationId, live, { knownOpen: fresh });
    let lease = held ?? await this.leases.hold(operationId).catch((error: unknown) => {
      this.logger.warn(`could not take the lease of ${operationId} (${errorType(error)}); the reconciler will`);
      return null;
    });
    if (!lease) {
      // Another process drives it now (or it ended): this one waits for the outcome.
      live.endDriving();
      this.live.watch(operationId, live);
      return;
    }
    let reason: TerminalReason = 'error';
    let signal = this.stepSignal(live, lease);
    // Not a cancellation: the app closes (the step is handed back) or another process took the lease over.
    const givenUp = (held: HeldLease) => !live.controller.signal.aborted && (this.shutdown.stopping.aborted || held.lost.aborted);
    try {
      if (fresh) await host.runStart(operationId, live, lease.owner);
      for (;;) {
        const result = await this.executor.step({ operationId, runContext: live.runContext, signal, stopping: this.shutdown.stopping, leaseOwner: lease.owner, subAgents: host });
        live.steps++;
        if (result && 'waiting' in result) {
          // The pause freed the lease in its own transaction, so a decision elsewhere may drive at once; a step
          // that found the operation already waiting frees it here (owner-conditional, harmless after a pause).
          await lease.release();
          if (live.takeResumeRequest()) {
            lease = await this.leases.hold(operationId);
            if (lease) {
              signal = this.stepSignal(live, lease);
              continue;
            }
          }
          live.endDriving();
          this.live.watch(operationId, live);
          return;
        }
        if (result) {
          if (result.terminal === 'interrupted' && givenUp(lease)) return await this.giveUp(operationId, live, lease);
          reason = result.terminal;
          if (result.limit) live.limit = result.limit;
          break;
        }
      }
    } catch (error) {
      if (lease && givenUp(lease)) return await this.giveUp(operationId, live, lease);
      reason = signal.aborted || error instanceof RuntimeShuttingDownError ? 'interrupted' : 'error';
      if (reason === 'error') live.error = error;
    }
    lease?.stop();
    await host.finish(operationId, live, reason, lease?.owner);
  }

  /** Cancelled, cut at the end of the shutdown grace period (G4), or the lease lost. */
  private stepSignal(live: LiveOperation, lease: HeldLease): AbortSignal {
    return AbortSignal.any([live.controller.signal, this.shutdown.cut, lease.lost]);
  }

  /**
   * The step stops without a terminal reason. Shutdown: the lease is handed back, so whichever process
   * reconciles next (this one restarted, or another) runs the step again — a plain call that was cut may
   * run twice (documented), an approved one never does. Lease lost: the new holder drives on.
   */
  private async giveUp(operationId: string, live: LiveOperation, lease: HeldLease): Promise<void> {
    live.endDriving();
    if (lease.lost.aborted) {
      lease.stop();
      this.live.watch(operationId, live);
      return;
    }
    await lease.handBack();
  }
}
