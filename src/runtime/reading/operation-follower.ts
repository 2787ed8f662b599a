/**
 * `runtime.events(operationId)` (DESIGN §12) and the source of `GET /v1/operations/:id/events` (§7): one
 * operation's published messages and status changes as they happen, ending after its `completed` status.
 * It follows the operation's events (DESIGN §4: this process's commits, and on PostgreSQL every other
 * process's), so it follows an operation whichever process drives it, and reads the database only when one
 * arrives, on a `resync`, and on the safety re-check every `recheckMs`. Unsubscribing stops it, and so
 * does the app's shutdown (it then completes). SPEC K5: the model's deltas are passed on as they come, never
 * waiting for the reader (`paced` holds the read loop, never the step); those that arrive before the first
 * read finished wait for it, so a watcher sees the messages so far before the text being written.
 */
import { Inject, Injectable } from '@nestjs/common';
import { Observable } from 'rxjs';
import { OPERATION_EVENTS, type OperationEvents } from '../operation-events.port.js';
import { OPERATION_DELTAS, type OperationDelta, type OperationDeltas } from '../streaming/operation-deltas.port.js';
import { RECOVERY_SETTINGS, type RecoverySettings } from '../recovery-settings.js';
import { UnknownOperationError } from '../runtime-errors.js';
import { OperationReadService } from './operation-read.service.js';
import type { OperationEvent } from './read-api.types.js';
import { runStreamLoop, StreamHandle } from './stream-handle.js';

export interface FollowOptions {
  /** Only messages published after this sequence number (a reconnecting SSE client's `Last-Event-ID`). */
  afterSeq?: number;
  /** Awaited after each batch of events: an SSE route waits here until its client took what was sent. */
  paced?: () => Promise<void>;
  /** Ends the loop early without an event (an SSE route's client went away between two reads). */
  handle?: StreamHandle;
}

/** A stream whose first read is slow holds at most this many deltas; later ones wait for nothing. */
const MAX_EARLY_DELTAS = 10_000;

@Injectable()
export class OperationFollower {
  private readonly open = new Set<StreamHandle>();
  private stopped = false;

  constructor(
    private readonly reader: OperationReadService,
    @Inject(OPERATION_EVENTS) private readonly events: OperationEvents,
    @Inject(RECOVERY_SETTINGS) private readonly settings: Pick<RecoverySettings, 'recheckMs'>,
    @Inject(OPERATION_DELTAS) private readonly deltas: OperationDeltas,
  ) {}

  /** SPEC G4: the app closes; every loop ends (its observable completes) before the database does. */
  stop(): void {
    this.stopped = true;
    for (const handle of this.open) handle.stop();
  }

  /**
   * The operation's events; errors with `UnknownOperationError` when it does not exist, with the store's
   * error when a read fails. Cold: each subscription runs its own loop.
   */
  follow(operationId: string, options: FollowOptions = {}): Observable<OperationEvent> {
    return new Observable<OperationEvent>((subscriber) => {
      const handle = options.handle ?? new StreamHandle();
      this.open.add(handle);
      // Subscribed before the first read: a commit made while it runs wakes the loop again.
      const subscription = this.events.of(operationId).subscribe(() => handle.poke());
      // Before the first read, deltas wait (bounded: the first read takes one round trip).
      let early: OperationDelta[] | undefined = [];
      const sendDelta = ({ stepIndex, text }: OperationDelta) => {
        if (!handle.stopped) subscriber.next({ type: 'delta', stepIndex, text });
      };
      subscription.add(
        this.deltas.of(operationId).subscribe((delta) => {
          if (early === undefined) sendDelta(delta);
          else if (early.length < MAX_EARLY_DELTAS) early.push(delta);
        }),
      );
      const firstRead = () => {
        const waiting = early ?? [];
        early = undefined;
        waiting.forEach(sendDelta);
      };
      const finish = () => {
        subscription.unsubscribe();
        this.open.delete(handle);
      };
      return runStreamLoop(this.loop(operationId, options, handle, (event) => subscriber.next(event), firstRead), subscriber, handle, finish);
    });
  }

  private async loop(operationId: string, options: FollowOptions, handle: StreamHandle, emit: (event: OperationEvent) => void, firstRead: () => void): Promise<void> {
    let lastSeq = options.afterSeq ?? 0;
    let lastStatus: string | undefined;
    let lastVersion: number | undefined;
    let lastRead = 0;
    let first = true;
    while (!handle.stopped && !this.stopped) {
      handle.changed = false;
      lastRead = Date.now();
      // The operation first: once it reads completed, every message it published is already visible.
      const operation = await this.reader.find(operationId);
      if (!operation) {
        if (first) throw new UnknownOperationError(operationId);
        return; // purged meanwhile: nothing more will come
      }
      const firstPass = first;
      first = false;
      // Pending items change with the version or while waiting (a decision is not a version bump).
      const changed = operation.version !== lastVersion || operation.status === 'waiting';
      // Both read after the operation, at once; emitted in order, the messages before the status.
      const [messages, view] = await Promise.all([this.reader.messagesAfter(operationId, lastSeq), changed ? this.reader.view(operation) : undefined]);
      for (const { seq, message } of messages) {
        if (handle.stopped) return;
        emit({ type: 'message', seq, message });
        lastSeq = seq;
      }
      if (view) {
        lastVersion = operation.version;
        const key = JSON.stringify([view.status, view.reason, view.pendingTools]);
        if (key !== lastStatus && !handle.stopped) {
          emit({ type: 'status', operation: view });
          lastStatus = key;
        }
      }
      if (operation.status === 'completed') return;
      if (firstPass) firstRead();
      await options.paced?.();
      // Until an event or the safety re-check, whichever comes first.
      const recheckIn = lastRead + this.settings.recheckMs - Date.now();
      if (recheckIn > 0) await handle.sleep(recheckIn);
    }
  }
}
