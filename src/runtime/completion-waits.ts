/**
 * "Resolve once operation X is completed", for any number of operations driven anywhere (DESIGN §4,
 * events instead of polling): the `done` of an operation another process drives, or of one waiting here
 * for a decision. Each waiter's operation is read once when it starts waiting, then again only when an
 * event says its state moved (any `status` event of it, or one reporting `completed`), after a `resync`
 * (the listening connection came back: events may have been missed) and on the one shared safety re-check
 * every `recheckMs`. However many operations are waited on, there is one subscription to the events, at
 * most one timer (running only while someone waits, and never keeping the process alive), and the reads
 * are batched: every operation due for a read goes into one `completedAmong` query.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Subscription } from 'rxjs';
import { errorType } from '../hooks/hook-errors.js';
import { OPERATION_EVENTS, type OperationEventSignal, type OperationEvents } from './operation-events.port.js';
import { RECOVERY_SETTINGS, type RecoverySettings } from './recovery-settings.js';
import { RuntimeShuttingDownError } from './runtime-errors.js';
import { RUNTIME_STORE, type RuntimeStore } from './runtime-store.port.js';

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

@Injectable()
export class CompletionWaits {
  private readonly logger = new Logger('AgentHooks:CompletionWaits');
  private readonly waiters = new Map<string, Set<Waiter>>();
  /** Operations to read in the next batch. */
  private readonly due = new Set<string>();
  private reading = false;
  private subscription: Subscription | undefined;
  private backstop: NodeJS.Timeout | undefined;
  private stopped = false;
  /** A failing read is logged once until reads succeed again. */
  private readFailing = false;

  constructor(
    @Inject(OPERATION_EVENTS) private readonly events: OperationEvents,
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
    @Inject(RECOVERY_SETTINGS) private readonly settings: RecoverySettings,
  ) {}

  /** How many operations are waited on (for tests and metrics). */
  get watching(): number {
    return this.waiters.size;
  }

  /**
   * Resolves once the operation reads `completed` in the database; rejects with `RuntimeShuttingDownError`
   * at `stop()`, or with `signal`'s reason when it aborts (the waiter is removed). The caller checked that
   * the operation exists.
   */
  whenCompleted(operationId: string, options: { signal?: AbortSignal; knownOpen?: boolean } = {}): Promise<void> {
    if (this.stopped) return Promise.reject(new RuntimeShuttingDownError());
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    // Subscribed before the first read, so a completion committed while it runs is not missed.
    this.subscription ??= this.events.events$.subscribe((event) => this.onSignal(event));
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.remove(operationId, waiter);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      let set = this.waiters.get(operationId);
      if (!set) {
        set = new Set();
        this.waiters.set(operationId, set);
      }
      set.add(waiter);
      this.startBackstop();
      // `knownOpen`: the caller just saw it open (it created it), so only its events can tell: no first read.
      if (!options.knownOpen) this.check([operationId]);
    });
  }

  /** Shutdown: every waiter rejects with `RuntimeShuttingDownError`; no read or timer is left. */
  stop(): void {
    this.stopped = true;
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.stopBackstop();
    this.due.clear();
    const waiting = [...this.waiters.values()];
    this.waiters.clear();
    const error = new RuntimeShuttingDownError();
    for (const set of waiting) for (const waiter of set) waiter.reject(error);
  }

  private onSignal(signal: OperationEventSignal): void {
    if (signal.kind === 'resync') {
      this.check(this.waiters.keys());
      return;
    }
    if (!this.waiters.has(signal.operationId)) return;
    // Events go out only once their change committed, and a completion is final: an event reporting
    // `completed` settles the waiter with no read (one statement less per operation). A commit
    // that says its status is not `completed` needs no read (every step commits one); an event without a
    // status is read to be sure.
    if (signal.status === 'completed') this.settle(signal.operationId);
    else if (signal.kind === 'status' && signal.status === undefined) this.check([signal.operationId]);
  }

  /** Queues the operations for the next batched read; one batch runs at a time, the next gathers meanwhile. */
  private check(operationIds: Iterable<string>): void {
    for (const id of operationIds) this.due.add(id);
    if (this.reading || this.due.size === 0) return;
    this.reading = true;
    // A microtask later: the waiters added in one synchronous burst share the first read.
    queueMicrotask(() => void this.readDue());
  }

  private async readDue(): Promise<void> {
    try {
      while (this.due.size > 0 && !this.stopped) {
        const ids = [...this.due].filter((id) => this.waiters.has(id));
        this.due.clear();
        if (ids.length === 0) continue;
        let completed: string[];
        try {
          completed = await this.store.completedAmong(ids);
          this.readFailing = false;
        } catch (error) {
          // The operations stay watched: the next event or safety re-check reads them again.
          if (!this.readFailing) this.logger.warn(`could not read whether awaited operations completed (${errorType(error)})`);
          this.readFailing = true;
          return;
        }
        for (const id of completed) this.settle(id);
      }
    } finally {
      this.reading = false;
      // Ids queued after a failed read wait for the next trigger; ids queued while reading are read now.
      if (!this.readFailing && this.due.size > 0 && !this.stopped) this.check([]);
    }
  }

  private settle(operationId: string): void {
    const set = this.waiters.get(operationId);
    if (!set) return;
    this.waiters.delete(operationId);
    if (this.waiters.size === 0) this.stopBackstop();
    for (const waiter of set) waiter.resolve();
  }

  private remove(operationId: string, waiter: Waiter): void {
    const set = this.waiters.get(operationId);
    if (!set) return;
    set.delete(waiter);
    if (set.size > 0) return;
    this.waiters.delete(operationId);
    if (this.waiters.size === 0) this.stopBackstop();
  }

  private startBackstop(): void {
    if (this.backstop) return;
    this.backstop = setInterval(() => this.check(this.waiters.keys()), this.settings.recheckMs);
    // A safety net only: it never keeps the process alive.
    this.backstop.unref();
  }

  private stopBackstop(): void {
    clearInterval(this.backstop);
    this.backstop = undefined;
  }
}
