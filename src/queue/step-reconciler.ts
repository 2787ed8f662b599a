/**
 * The reconciler (DESIGN §4): Redis only carries work, so a job can be lost (a Redis restart, a crash
 * between a commit and the next enqueue). Every `reconcileEveryMs`, running operations that nobody holds
 * and that have not moved for a while are scheduled again; the job id (operation + version) makes this
 * idempotent when their job still exists. It also runs terminal sequences a dead worker owed. Runs
 * wherever step workers run.
 */
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { errorType } from '../hooks/hook-errors.js';
import { OperationRunner } from '../runtime/operation-runner.js';
import { LeaseStores } from './lease-stores.js';
import { QUEUE_SETTINGS, type QueueSettings } from './queue-settings.js';
import { StepQueue } from './step-queue.js';

@Injectable()
export class StepReconciler implements OnApplicationBootstrap {
  private readonly logger = new Logger('AgentHooks:Reconciler');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    @Inject(QUEUE_SETTINGS) private readonly settings: QueueSettings,
    private readonly leases: LeaseStores,
    private readonly steps: StepQueue,
    private readonly runtime: OperationRunner,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.settings.enabled || !this.settings.worker) return;
    this.timer = setInterval(() => {
      this.running ??= this.reconcile().then(
        () => undefined,
        () => undefined,
      ).finally(() => (this.running = undefined));
    }, this.settings.reconcileEveryMs);
    this.timer.unref();
  }

  /** No more passes; waits for the one running. The `ShutdownCoordinator` calls it first (G4). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One pass; returns how many operations were scheduled again. */
  async reconcile(): Promise<number> {
    try {
      const leases = await this.leases.leases();
      // Untouched for two intervals: a step that just committed has had time to enqueue its successor.
      const quietSince = new Date(Date.now() - 2 * this.settings.reconcileEveryMs).toISOString();
      const stuck = (await leases.listUnleased(100)).filter((operation) => operation.updatedAt <= quietSince);
      for (const operation of stuck) await this.steps.schedule(operation.id, operation.version);
      // Terminal sequences a dead worker owed (hooks, the sub-agent bridge) run here, at least once.
      await this.runtime.runOwedTerminalSequences();
      return stuck.length;
    } catch (error) {
      this.logger.warn(`reconcile pass failed (${errorType(error)})`);
      return 0;
    }
  }
}
