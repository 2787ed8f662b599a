/**
 * Queue mode's `StepScheduler` (DESIGN §4): `on_run_start` runs where the operation was started (the
 * caller's identity and token are there), then every step is a BullMQ job (`StepQueue`) that any worker
 * takes under the operation's lease (`StepWorker`) and runs here, in `run`. `done` settles wherever the
 * operation ends: the database's events say so (`LiveOperations.watch`).
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import { errorType } from '../hooks/hook-errors.js';
import { HookRegistry } from '../hooks/hook-registry.js';
import { LiveOperation, restoredLive } from '../runtime/live-operation.js';
import { LiveOperations } from '../runtime/live-operations.js';
import { RUNTIME_STORE, type RuntimeStore, type StoredOperation } from '../runtime/runtime-store.port.js';
import { StepDrain } from '../runtime/step-drain.js';
import { StepExecutor } from '../runtime/step-executor.js';
import type { StepHost, StepScheduler } from '../runtime/step-scheduler.port.js';
import { neverStarted } from '../runtime/run-start.js';
import { StepQueue } from './step-queue.js';

/** What a worker passes when it runs one scheduled step. */
export interface QueuedStepContext {
  /** The worker's lease owner id: every commit of the step is fenced by it. */
  leaseOwner: string;
  /** Aborted when the worker stops or the operation was cancelled elsewhere. */
  signal: AbortSignal;
  /** The operation as the worker's lease found it (the lease's own statement): the step does not read it again. */
  operation: StoredOperation;
  /** A step that goes on lets the lease go with its last commit and says so here (`StepInput.onLeaseReleased`). */
  onLeaseReleased?: (operation: StoredOperation) => void;
}

/**
 * What a queued step asks of its worker: schedule the next step, nothing, or give the job back. `ended`:
 * the step made the terminal transition, which moved the lease to the terminal sequence's holder — there is
 * no lease left to let go.
 */
export type QueuedStepOutcome = 'next' | 'ran' | 'ended' | 'handedBack';

@Injectable()
export class QueuedStepScheduler implements StepScheduler {
  private readonly logger = new Logger('AgentRuntime');

  constructor(
    private readonly queue: StepQueue,
    private readonly executor: StepExecutor,
    private readonly registry: HookRegistry,
    private readonly live: LiveOperations,
    private readonly shutdown: StepDrain,
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
  ) {}

  begin(operationId: string, live: LiveOperation, host: StepHost): void {
    void this.startQueued(operationId, live, host);
  }

  async goOn(operationId: string): Promise<void> {
    if (this.shutdown.stopped) return;
    await this.scheduleNext(operationId);
  }

  async goOnAfter(notify: () => Promise<void>, operationId: string): Promise<void> {
    try {
      await notify();
    } finally {
      await this.goOn(operationId);
    }
  }

  /** Enqueued again: the job id (operation + version) makes that idempotent while its job still exists. */
  async adopt(operationId: string): Promise<void> {
    await this.scheduleNext(operationId);
  }

  /**
   * On a worker: runs one step of a running operation and reacts — `next` asks the worker to schedule the
   * next step, a pause leaves it waiting, a terminal reason runs the terminal sequence here. Caller webhooks
   * come from the database and environment hooks from this worker's current environment (W3, L1); handlers
   * given to `execAgent` in another process are not here. A step that lost its lease, or whose operation
   * ended elsewhere (cancelled), stops without a second terminal sequence.
   */
  run(operationId: string, worker: QueuedStepContext, host: StepHost): Promise<QueuedStepOutcome> {
    const step = this.step(operationId, worker, host);
    this.shutdown.track(step);
    return step;
  }

  private async startQueued(operationId: string, live: LiveOperation, host: StepHost): Promise<void> {
    try {
      await host.runStart(operationId, live);
    } catch (error) {
      live.error = error;
      await host.finish(operationId, live, 'error');
      return;
    }
    await this.scheduleNext(operationId);
    // Its steps run as jobs, each in its own segment of the trace: this process's first span ends here.
    live.endTraceRoot();
    this.live.watch(operationId, live);
  }

  /** Hands the operation's next step to the queue; if that fails (Redis down), the reconciler retries it. */
  private async scheduleNext(operationId: string): Promise<void> {
    try {
      const operation = await this.store.getOperation(operationId);
      if (operation?.status === 'running') await this.queue.schedule(operationId, operation.version);
    } catch (error) {
      this.logger.warn(`could not schedule the next step of ${operationId} (${errorType(error)}); the reconciler will`);
    }
  }

  private async step(operationId: string, worker: QueuedStepContext, host: StepHost): Promise<QueuedStepOutcome> {
    const { operation } = worker;
    if (operation.status !== 'running') return 'ran';
    // G4: a job taken while the app closes goes back to the queue untouched.
    if (this.shutdown.stopped) return 'handedBack';
    const own = this.live.get(operationId);
    const live = own ?? restoredLive(operation);
    const restoredHere = !this.registry.hasCallerHooks(operationId);
    const signal = AbortSignal.any([live.controller.signal, worker.signal, this.shutdown.cut]);
    // The worker or the app stopping is not a cancellation: the step goes back to the queue for another worker.
    const handingBack = async () =>
      (worker.signal.aborted || this.shutdown.stopped) && !live.controller.signal.aborted && (await this.store.getOperation(operationId))?.status === 'running';
    live.beginDriving();
    try {
      // Its creator died before `on_run_start` committed (the reconciler enqueued it): it runs here first.
      if (!own && neverStarted(operation)) await host.runStart(operationId, live, worker.leaseOwner);
      const result = await this.executor.step({
        operationId,
        runContext: live.runContext,
        signal,
        leaseOwner: worker.leaseOwner,
        stopping: this.shutdown.stopping,
        subAgents: host,
        ...(worker.onLeaseReleased ? { onLeaseReleased: worker.onLeaseReleased } : {}),
      });
      // The worker schedules the next step once it has let go of the operation's lease.
      if (result === undefined) return 'next';
      if ('terminal' in result) {
        if (result.terminal === 'interrupted' && (await handingBack())) return 'handedBack';
        if (result.limit) live.limit = result.limit;
        await host.finish(operationId, live, result.terminal);
        return 'ended';
      }
      return 'ran';
    } catch (error) {
      if (await handingBack()) return 'handedBack';
      const now = await this.store.getOperation(operationId);
      // Ended elsewhere (cancel) or taken over by another worker after our lease lapsed: not ours to end.
      if (!now || now.status !== 'running' || (now.leaseOwner !== undefined && now.leaseOwner !== worker.leaseOwner)) return 'ran';
      if (!signal.aborted) live.error = error;
      await host.finish(operationId, live, signal.aborted ? 'interrupted' : 'error');
      return 'ran';
    } finally {
      live.endDriving();
      // A worker keeps nothing of an operation whose next step may run anywhere (A4).
      if (!own && restoredHere) this.registry.unregister(operationId);
      // The step's timeline is written before the job ends: a worker killed later loses none of it.
      await this.store.flushTimeline().catch(() => undefined);
    }
  }
}
