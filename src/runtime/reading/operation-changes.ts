/**
 * `runtime.changes({ ownerId? })` (DESIGN §12) and the source of `GET /v1/events` (§7): every change of an
 * owner's operations — created, status, step, usage — in any process sharing the database, each as the
 * operation's list item after the change; a `resync` when changes may have been missed (the PostgreSQL
 * listening connection came back). It never completes on its own: unsubscribing stops it, and so does the
 * app's shutdown (it then completes).
 *
 * It follows every operation event of the database (DESIGN §4) and reads only what the events named: the
 * ids gathered while a read runs are read together, that read shared with every other follower that wants
 * them at the same moment (`SharedSummaryReads`), and only the owner's operations are emitted (SPEC G9).
 * There is no timed re-check: the one source of events that can miss any, the PostgreSQL listener, says
 * so with a `resync` after it reconnects.
 */
import { Inject, Injectable } from '@nestjs/common';
import { Observable } from 'rxjs';
import { OPERATION_EVENTS, type OperationEvents } from '../operation-events.port.js';
import { operationListItemView } from './operation-views.js';
import type { OperationChange, OperationChangesOptions } from './read-api.types.js';
import { SharedSummaryReads, UNKNOWN_OWNER } from './shared-summary-reads.js';
import { runStreamLoop, StreamHandle } from './stream-handle.js';

export interface ChangesOptions extends OperationChangesOptions {
  /** Awaited after each batch of changes: an SSE route waits here until its client took what was sent. */
  paced?: () => Promise<void>;
  /** Ends the loop early (an SSE route's client went away). */
  handle?: StreamHandle;
}

/** Whether an operation of `ownerId` is one the follower of `wanted` sees: its own, or every one without an owner filter. */
export function ownedBy(wanted: string | undefined, ownerId: string | undefined): boolean {
  return wanted === undefined || ownerId === wanted;
}

@Injectable()
export class OperationChanges {
  private readonly open = new Set<StreamHandle>();
  private stopped = false;

  constructor(
    private readonly reads: SharedSummaryReads,
    @Inject(OPERATION_EVENTS) private readonly events: OperationEvents,
  ) {}

  /** SPEC G4: the app closes; every loop ends (its observable completes) before the database does. */
  stop(): void {
    this.stopped = true;
    for (const handle of this.open) handle.stop();
  }

  /** The owner's changes (every owner's without `ownerId`); errors with the store's error when a read fails. */
  changes(options: ChangesOptions = {}): Observable<OperationChange> {
    const owner = options.ownerId;
    return new Observable<OperationChange>((subscriber) => {
      const handle = options.handle ?? new StreamHandle(false);
      const pending = new Set<string>();
      let resync = false;
      // Subscribed at once: whatever commits after the caller subscribed is seen.
      const subscription = this.events.events$.subscribe((signal) => {
        if (signal.kind === 'resync') resync = true;
        else if (signal.kind !== 'created' && signal.kind !== 'status') return;
        else {
          const known = this.reads.ownerOf(signal.operationId);
          if (known !== UNKNOWN_OWNER && !ownedBy(owner, known)) return;
          pending.add(signal.operationId);
        }
        handle.poke();
      });
      this.open.add(handle);
      const finish = () => {
        subscription.unsubscribe();
        this.open.delete(handle);
      };
      const emit = (change: OperationChange) => {
        if (!handle.stopped) subscriber.next(change);
      };
      const loop = async () => {
        while (!handle.stopped && !this.stopped) {
          handle.changed = false;
          if (resync) {
            resync = false;
            emit({ type: 'resync' });
          }
          if (pending.size > 0) {
            const ids = [...pending];
            pending.clear();
            const found = await this.reads.read(ids);
            for (const id of ids) {
              const summary = found.get(id);
              if (summary && ownedBy(owner, summary.ownerId)) emit({ type: 'operation', operation: operationListItemView(summary) });
            }
            await options.paced?.();
          }
          if (handle.changed || handle.stopped || this.stopped) continue;
          // Only an event, the subscriber or shutdown wakes it (no timed re-check, see above).
          await handle.sleep(Infinity);
        }
      };
      return runStreamLoop(loop(), subscriber, handle, finish);
    });
  }
}
