/**
 * The operations live in this process (started, driven, decided or watched here), one `LiveOperation` each,
 * and the watcher that settles their `done` when another process completes them. A watcher holds no timer:
 * it follows the operation's events (`CompletionWaits`). `result` is the `done` of any operation, live here
 * or not.
 */
import { Inject, Injectable } from '@nestjs/common';
import { HookRegistry } from '../hooks/hook-registry.js';
import { CompletionWaits } from './completion-waits.js';
import { LiveOperation, restoredLive } from './live-operation.js';
import { existingOperation } from './existing-operation.js';
import { handedOut } from './handed-out.js';
import { completedResult, emptyResult, resultOf, type OperationResult } from './operation-result.js';
import { RunCancelledError, RuntimeShuttingDownError } from './runtime-errors.js';
import { RUNTIME_STORE, type RuntimeStore, type StoredOperation } from './runtime-store.port.js';

@Injectable()
export class LiveOperations {
  private readonly live = new Map<string, LiveOperation>();

  constructor(
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
    private readonly registry: HookRegistry,
    private readonly waits: CompletionWaits,
  ) {}

  get(operationId: string): LiveOperation | undefined {
    return this.live.get(operationId);
  }

  has(operationId: string): boolean {
    return this.live.has(operationId);
  }

  add(operationId: string, live: LiveOperation): void {
    this.live.set(operationId, live);
  }

  /** The live state of an operation this process did not start (after a restart): context from the database, no token. */
  ensure(operation: StoredOperation): LiveOperation {
    let live = this.live.get(operation.id);
    if (!live) {
      live = restoredLive(operation);
      this.live.set(operation.id, live);
      this.watch(operation.id, live);
    }
    return live;
  }

  /**
   * One watcher per live operation, on its events (no timer of its own): when another process completes it
   * — a cancel, a decision, a takeover — `done` settles here, and a step this process is still running on
   * it is aborted (its commits would be refused anyway).
   */
  watch(operationId: string, live: LiveOperation, options: { knownOpen?: boolean } = {}): void {
    if (!live.startWatching()) return;
    void this.waits.whenCompleted(operationId, options).then(
      async () => {
        live.stopWatching();
        if (live.endsHere) return;
        if (live.stepLoopHere) {
          live.controller.abort(new RunCancelledError(operationId));
          return;
        }
        const operation = await this.store.getOperation(operationId).catch(() => null);
        const reason = operation?.reason ?? 'done';
        this.release(operationId, live, await resultOf(this.store, operationId, reason).catch(() => emptyResult(operationId, reason)));
      },
      () => live.stopWatching(),
    ).catch(() => undefined);
  }

  /** Settles `done` and drops everything this process held for the operation (A4). */
  release(operationId: string, live: LiveOperation, result: OperationResult): void {
    this.registry.unregister(operationId);
    if (this.live.get(operationId) === live) this.live.delete(operationId);
    live.settle(result);
  }

  /**
   * Resolves with the operation's result once it is completed, here or in another process. Like every
   * `done`, never an unhandled rejection when the app closes before it settles.
   */
  result(operationId: string): Promise<OperationResult> {
    const live = this.live.get(operationId);
    return live ? live.done : handedOut(this.resultOfStored(operationId));
  }

  /**
   * G4, once the steps drained: waiting and handed-back operations stay in the database for whoever resumes
   * or reconciles them; a `done` of this app can no longer settle, so it rejects instead of hanging.
   */
  abandonAll(): void {
    for (const live of this.live.values()) live.abandon(new RuntimeShuttingDownError());
    this.live.clear();
    this.waits.stop();
  }

  /** An operation this process is not driving: from its row when completed, else once its events say so (G2). */
  private async resultOfStored(operationId: string): Promise<OperationResult> {
    const stored = await existingOperation(this.store, operationId);
    if (stored.status === 'completed') return completedResult(this.store, stored);
    await this.waits.whenCompleted(operationId);
    const operation = await existingOperation(this.store, operationId);
    return resultOf(this.store, operationId, operation.reason ?? 'done');
  }
}
