/**
 * Runs step jobs in this process (queue mode with `worker` on). For each job: the database lease first —
 * one holder per operation, renewed while the step runs, fencing every commit of the step —, then one
 * step through `QueuedStepScheduler.run`. While a step runs, the worker follows the operation's events
 * (DESIGN §4: no polling) and aborts the step when one says it was completed elsewhere (a cancel). On shutdown it stops taking jobs and hands running steps back.
 */
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { Job, Worker } from 'bullmq';
import type { Subscription } from 'rxjs';
import { errorType } from '../hooks/hook-errors.js';
import { OperationStart } from '../runtime/operation-start.js';
import { OPERATION_EVENTS, type OperationEvents } from '../runtime/operation-events.port.js';
import type { ReleasedOperation } from '../runtime/operation-leases.port.js';
import { RUNTIME_STORE, type RuntimeStore, type StoredOperation } from '../runtime/runtime-store.port.js';
import { LeaseHolder } from '../runtime/lease-holder.js';
import { redisConnection } from './queue-connection.js';
import { QUEUE_SETTINGS, STEP_QUEUE_NAME, type QueueSettings } from './queue-settings.js';
import { QueuedStepScheduler, type QueuedStepOutcome } from './queued-step-scheduler.js';
import { StepQueue, type StepJobData } from './step-queue.js';

/** How long a job waits before trying again when another worker holds the operation. */
const BUSY_RETRY_MS = 200;

export class StepHandedBackError extends Error {
  override readonly name = 'StepHandedBackError';
}

@Injectable()
export class StepWorker implements OnApplicationBootstrap {
  private readonly logger = new Logger('AgentHooks:StepWorker');
  private readonly stopping = new AbortController();
  private worker: Worker<StepJobData> | undefined;

  constructor(
    @Inject(QUEUE_SETTINGS) private readonly settings: QueueSettings,
    /** The runtime a step calls back into (`on_run_start`, the terminal sequence, sub-agents). */
    private readonly runtime: OperationStart,
    private readonly scheduler: QueuedStepScheduler,
    private readonly leases: LeaseHolder,
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
    private readonly steps: StepQueue,
    @Inject(OPERATION_EVENTS) private readonly events: OperationEvents,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.settings.enabled || !this.settings.worker) return;
    const { Worker } = await import('bullmq');
    this.worker = new Worker<StepJobData>(STEP_QUEUE_NAME, (job, token) => this.process(job, token), {
      connection: redisConnection(this.settings.redis),
      prefix: this.settings.prefix,
      concurrency: this.settings.concurrency,
      lockDuration: this.settings.lockMs,
      stalledInterval: Math.max(1_000, Math.floor(this.settings.lockMs / 2)),
      maxStalledCount: 10,
    });
    this.worker.on('error', (error: Error & { code?: unknown }) => this.logger.warn(`step worker: ${errorType(error)}${typeof error.code === 'string' ? ` (${error.code})` : ''}`));
  }

  /**
   * Stop taking jobs and wait for the running ones. The `ShutdownCoordinator` calls it while the runtime
   * drains (G4): a running step finishes its current tool call within the grace period or is cut and goes
   * back to the queue; only then does this worker's own stop signal abort what is left.
   */
  async close(): Promise<void> {
    await this.worker?.close();
    this.worker = undefined;
    this.stopping.abort();
  }

  /**
   * The lease first, by the one statement that also answers the operation (no read before it, none after):
   * a job whose operation is done, waiting or moved on lets it go at once; the step works from that row.
   * A step that goes on lets the lease go with its last commit, which answers the version the next step's
   * job carries; a step that ended handed the lease to its terminal sequence. Otherwise it is let go here.
   */
  private async process(job: Job<StepJobData>, token: string | undefined): Promise<void> {
    const { operationId, version } = job.data;
    // Watched from before the lease is taken (the lease refuses a completed operation): a cancel committed
    // from then on is never missed.
    const abort = new AbortController();
    const watch = this.watchForCancel(operationId, abort);
    const lease = await this.leases.hold(operationId).catch((error: unknown) => {
      watch.unsubscribe();
      throw error;
    });
    if (!lease) {
      watch.unsubscribe();
      // Done or moved on: nothing to wait for (read only here, where no lease answered it).
      const operation = await this.store.getOperation(operationId);
      if (!operation || operation.status !== 'running' || operation.version !== version) return;
      // Another worker holds the operation (a duplicate job, or the holder died and its lease has not lapsed).
      const { DelayedError } = await import('bullmq');
      await job.moveToDelayed(Date.now() + BUSY_RETRY_MS, token);
      throw new DelayedError();
    }
    // Waiting, or a job for an older version (a newer job carries the operation from here).
    if (lease.operation.status !== 'running' || lease.operation.version !== version) {
      watch.unsubscribe();
      await lease.release();
      return;
    }
    const signal = AbortSignal.any([abort.signal, this.stopping.signal, lease.lost]);
    let outcome: QueuedStepOutcome | undefined;
    // The operation as the statement that let the lease go left it: the step's last commit, or the release below.
    const letGo: { operation?: ReleasedOperation | null } = {};
    let releasedByCommit = false;
    const onLeaseReleased = (committed: StoredOperation) => {
      lease.stop();
      letGo.operation = committed;
      releasedByCommit = true;
    };
    try {
      outcome = await this.scheduler.run(operationId, { leaseOwner: lease.owner, signal, operation: lease.operation, onLeaseReleased }, this.runtime);
    } finally {
      watch.unsubscribe();
      if (outcome === 'ended') lease.stop();
      else if (letGo.operation === undefined) letGo.operation = await lease.release();
    }
    // The step's last commit let the lease go because the operation goes on: whatever the step said after
    // it (a renewal answered just after that commit reads as a lost lease; a stop signal), the next step is
    // owed now — retrying this job would only find it stale, and the reconciler would wait a whole lease.
    if (outcome === 'handedBack' && !releasedByCommit) throw new StepHandedBackError(`step of ${operationId} handed back by a stopping worker`);
    if (outcome === 'next' || releasedByCommit) {
      // After the release: the next step's job must not find the lease still held by this one. The release
      // said the version; without it (the lease had moved on, or the release failed) the operation is read.
      const next = letGo.operation ?? (await this.store.getOperation(operationId).catch(() => null));
      if (next?.status === 'running') await this.steps.schedule(operationId, next.version).catch((error: unknown) => {
        this.logger.warn(`could not schedule the next step of ${operationId} (${errorType(error)}); the reconciler will`);
      });
    }
  }

  /**
   * Aborts when an event says the operation was completed; after a `resync` (events may have been missed)
   * or a status event that does not say which status, it reads the operation once.
   */
  private watchForCancel(operationId: string, abort: AbortController): Subscription {
    const cancelled = () => abort.abort(new Error('cancelled elsewhere'));
    return this.events.of(operationId).subscribe((event) => {
      if (abort.signal.aborted) return;
      if (event.kind !== 'resync' && event.status === 'completed') return cancelled();
      if (event.kind === 'resync' || (event.kind === 'status' && event.status === undefined)) {
        void this.store.getOperation(operationId).then(
          (now) => (now?.status === 'completed' ? cancelled() : undefined),
          () => undefined,
        );
      }
    });
  }
}
