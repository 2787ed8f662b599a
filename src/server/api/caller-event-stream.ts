/**
 * `GET /v1/events` (v0.2, DESIGN §7): one Server-Sent Events stream of the changes to all of the caller's
 * operations, so a list (the console's) shows an operation started or finished by anyone, in any process,
 * without re-reading. Each `operation` event is the operation's list item (`GET /v1/operations` item
 * shape) after a change — created, status, step, usage; a `resync` event says events may have been missed
 * (the PostgreSQL listening connection came back) and the client should re-read its list. The stream never
 * ends on its own; it stops when the client goes away or the app shuts down.
 *
 * It follows every operation event of the database (DESIGN §4), and reads only the ones that name a
 * changed operation: the ids gathered while a read runs are read together, in one statement filtered by
 * the caller's owner, so a burst of commits costs one read and another owner's operation is never sent.
 * An operation found not to be the caller's is remembered (ownership never changes) and its later events
 * cost nothing.
 */
import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import type { Response } from 'express';
import type { Subscription } from 'rxjs';
import { errorType } from '../../hooks/hook-errors.js';
import { OPERATION_EVENTS, type OperationEvents } from '../../runtime/operation-events.port.js';
import type { Caller } from './caller.js';
import { OperationReader } from './operation-reader.js';
import { SseWriter, StreamHandle } from './sse-stream.js';

/** Operations read together at most (one `IN (…)` list). */
export const READ_BATCH = 100;
/** Ids remembered as another owner's, per stream; the oldest are forgotten first (then merely read again). */
export const FOREIGN_MEMORY = 10_000;

/** What one stream has to read next. */
class ChangedOperations {
  private readonly pending = new Set<string>();
  private readonly foreign = new Set<string>();
  resync = false;

  note(operationId: string): boolean {
    if (this.foreign.has(operationId)) return false;
    this.pending.add(operationId);
    return true;
  }

  get empty(): boolean {
    return this.pending.size === 0;
  }

  /** Up to READ_BATCH ids, oldest change first, removed from the pending set. */
  take(): string[] {
    const ids: string[] = [];
    for (const id of this.pending) {
      ids.push(id);
      this.pending.delete(id);
      if (ids.length === READ_BATCH) break;
    }
    return ids;
  }

  /** Not the caller's (or purged): its events are ignored from now on. */
  notMine(operationId: string): void {
    this.foreign.add(operationId);
    if (this.foreign.size > FOREIGN_MEMORY) this.foreign.delete(this.foreign.values().next().value!);
  }
}

@Injectable()
export class CallerEventStreams implements BeforeApplicationShutdown {
  private readonly logger = new Logger('CallerEvents');
  private readonly open = new Set<StreamHandle>();
  private shuttingDown = false;

  constructor(
    private readonly reader: OperationReader,
    @Inject(OPERATION_EVENTS) private readonly events: OperationEvents,
  ) {}

  /** Open streams end before the HTTP server closes, or closing would wait for them. */
  beforeApplicationShutdown(): void {
    this.shuttingDown = true;
    for (const handle of this.open) handle.stop();
  }

  /** Streams the changes of `caller`'s operations into `response` until the client or the app goes away. */
  async stream(caller: Caller, response: Response): Promise<void> {
    const handle = new StreamHandle();
    handle.changed = false;
    const changed = new ChangedOperations();
    // Subscribed before the headers go out: whatever commits after the client sees the stream open is sent.
    const subscription: Subscription = this.events.events$.subscribe((signal) => {
      if (signal.kind === 'resync') changed.resync = true;
      else if (signal.kind !== 'created' && signal.kind !== 'status') return;
      else if (!changed.note(signal.operationId)) return;
      handle.poke();
    });
    const writer = new SseWriter(response);
    writer.open();
    this.open.add(handle);
    response.on('close', () => handle.stop());
    try {
      while (!handle.stopped && !this.shuttingDown) {
        handle.changed = false;
        if (changed.resync) {
          changed.resync = false;
          writer.send('resync', {});
        }
        while (!changed.empty && !handle.stopped) {
          const ids = changed.take();
          const items = await this.reader.summaries(caller, ids);
          const mine = new Set(items.map((item) => item.operationId));
          for (const id of ids) if (!mine.has(id)) changed.notMine(id);
          for (const item of items) writer.send('operation', item);
        }
        if (handle.changed || handle.stopped || this.shuttingDown) continue;
        await handle.sleep(writer.heartbeat());
      }
    } catch (error) {
      this.logger.warn(`the caller event stream failed (${errorType(error)})`);
      writer.send('error', { error: { code: 'internal', message: 'the event stream failed; reconnect and re-read the list' } });
    } finally {
      subscription.unsubscribe();
      this.open.delete(handle);
      writer.end();
    }
  }
}
