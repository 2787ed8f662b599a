/**
 * The `OperationEvents` port (DESIGN §4, "events, not polling"): one hot stream of the operation events
 * of the runtime's database. It merges
 * - what this process committed — `committed$` of the runtime's `StoreDatabase` handle, from the moment
 *   `RuntimeDatabase` opened it (subscribing never opens the database), and
 * - on PostgreSQL, what the other processes committed — one dedicated listening connection
 *   (`PostgresEventListener`, `LISTEN` on its schema's channel, `eventsChannelOf`), started when the database opened; it skips the
 *   payloads this process notified itself and signals `resync` after every (re)connect.
 * SQLite serves one process, so there it is in-process only. `of(id)` routes through one map, so many
 * subscribers of single operations cost one lookup per event, not one filter each; and while nobody
 * follows every event (`events$`), another process's payload that names none of the few operations
 * followed here is dropped unparsed (a queue worker hears every worker's commits). The
 * `ShutdownCoordinator` calls `close()` just before the database closes.
 */
import { Injectable, Logger } from '@nestjs/common';
import { Observable, Subject, type Subscriber, type Subscription } from 'rxjs';
import { errorType } from '../hooks/hook-errors.js';
import type { OperationEvent, OperationEventSignal, OperationEvents } from '../runtime/operation-events.port.js';
import { PostgresEventListener } from './postgres-event-listener.js';
import { RuntimeDatabase } from './runtime-database.js';
import type { StoreDatabase } from './store-database.js';

const RESYNC: OperationEventSignal = Object.freeze({ kind: 'resync' as const });
/** Followed operations up to which a payload is searched for their ids rather than parsed. */
const SCANNED_OPERATIONS = 32;
/** Ids that appear verbatim in a JSON payload (nothing to escape): those a search can find. */
const VERBATIM_ID = /^[A-Za-z0-9_.:-]+$/;

@Injectable()
export class OperationEventsService implements OperationEvents {
  private readonly logger = new Logger('AgentHooks:OperationEvents');
  private readonly signals = new Subject<OperationEventSignal>();
  private readonly byOperation = new Map<string, Set<Subscriber<OperationEventSignal>>>();
  /** Followed ids a payload search could miss (JSON would escape them): while any is followed, every payload is parsed. */
  private unscannable = 0;
  private attached: { database: StoreDatabase; committed: Subscription; listener: PostgresEventListener | undefined } | undefined;
  private closed = false;

  readonly events$: Observable<OperationEventSignal> = this.signals.asObservable();

  constructor(database: RuntimeDatabase) {
    database.opened$.subscribe((handle) => this.attach(handle));
    const open = database.current;
    if (open) this.attach(open.database);
  }

  of(operationId: string): Observable<OperationEventSignal> {
    return new Observable<OperationEventSignal>((subscriber) => {
      let subscribers = this.byOperation.get(operationId);
      if (!subscribers) {
        subscribers = new Set();
        this.byOperation.set(operationId, subscribers);
        if (!VERBATIM_ID.test(operationId)) this.unscannable++;
      }
      subscribers.add(subscriber);
      return () => {
        const current = this.byOperation.get(operationId);
        if (!current) return;
        current.delete(subscriber);
        if (current.size > 0) return;
        this.byOperation.delete(operationId);
        if (!VERBATIM_ID.test(operationId)) this.unscannable--;
      };
    });
  }

  /** Stops listening (the connection of PostgreSQL ends); `events$` stays open but quiet. */
  async close(): Promise<void> {
    this.closed = true;
    await this.detach();
  }

  /** Follows the stores' handle. */
  private attach(database: StoreDatabase): void {
    const dataSource = database.dataSource;
    if (this.closed || this.attached?.database === database) return;
    // The database was closed and opened again (a new handle, perhaps on the host's same DataSource): follow the new one.
    if (this.attached) void this.detach();
    const committed = database.committed$.subscribe((event) => this.emit(event));
    let listener: PostgresEventListener | undefined;
    if (database.dialect === 'postgres') {
      try {
        listener = new PostgresEventListener(dataSource, database.origin, {
          events: (events) => {
            for (const event of events) this.emit(event);
          },
          resync: () => this.emit(RESYNC),
          mayWant: (payload) => this.mayWant(payload),
        }, this.logger);
        listener.start();
      } catch (error) {
        // Without a listener only this process's events arrive; the safety re-checks still cover the rest.
        this.logger.warn(`operation events of other processes are not followed (${errorType(error)})`);
        listener = undefined;
      }
    }
    this.attached = { database, committed, listener };
  }

  private async detach(): Promise<void> {
    const attached = this.attached;
    this.attached = undefined;
    attached?.committed.unsubscribe();
    await attached?.listener?.close();
  }

  /** False only when no event of `payload` can reach a subscriber (`EventSink.mayWant`). */
  private mayWant(payload: string): boolean {
    if (this.signals.observed || this.unscannable > 0 || this.byOperation.size > SCANNED_OPERATIONS) return true;
    for (const operationId of this.byOperation.keys()) if (payload.includes(operationId)) return true;
    return false;
  }

  private emit(signal: OperationEventSignal): void {
    this.signals.next(signal);
    if (signal.kind === 'resync') {
      for (const subscribers of [...this.byOperation.values()]) for (const subscriber of [...subscribers]) subscriber.next(signal);
      return;
    }
    const subscribers = this.byOperation.get((signal as OperationEvent).operationId);
    if (subscribers) for (const subscriber of [...subscribers]) subscriber.next(signal);
  }
}
