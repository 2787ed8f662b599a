/**
 * `GET /v1/events` (v0.2, DESIGN §7): one Server-Sent Events stream of the changes to all of the caller's
 * operations, so a list (the console's) shows an operation started or finished by anyone, in any process,
 * without re-reading. Each `operation` event is the operation's list item (`GET /v1/operations` item
 * shape) after a change — created, status, step, usage; a `resync` event says events may have been missed
 * (the PostgreSQL listening connection came back) and the client should re-read its list. The stream never
 * ends on its own; it stops when the client goes away, falls too far behind, or the app shuts down.
 *
 * It follows every operation event of the database (DESIGN §4) and reads only what the events named: the
 * ids gathered while a read runs are read together, that read shared with every other stream that wants
 * them at the same moment (`SharedSummaryReads`), and only the caller's own operations are sent. There is
 * no timed re-check: the events' one source that can miss any, the PostgreSQL listener, says so with a
 * `resync` after it reconnects, and a client re-reads its list whenever its stream (re)opens.
 */
import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import type { Response } from 'express';
import { errorType } from '../../hooks/hook-errors.js';
import { OPERATION_EVENTS, type OperationEvents } from '../../runtime/operation-events.port.js';
import { ApiError } from './api-error.js';
import type { Caller } from './caller.js';
import { visibleTo } from './operation-reader.js';
import { operationListItemView } from './operation-views.js';
import { SharedSummaryReads, UNKNOWN_OWNER } from './shared-summary-reads.js';
import { SseWriter, StreamHandle } from './sse-stream.js';

/** Open caller streams per owner: a console needs one per tab; beyond this a key is refused (429). */
export const STREAMS_PER_OWNER = 16;

@Injectable()
export class CallerEventStreams implements BeforeApplicationShutdown {
  private readonly logger = new Logger('CallerEvents');
  private readonly open = new Set<StreamHandle>();
  private readonly perOwner = new Map<string, number>();
  private shuttingDown = false;

  constructor(
    private readonly reads: SharedSummaryReads,
    @Inject(OPERATION_EVENTS) private readonly events: OperationEvents,
  ) {}

  /** Open streams end before the HTTP server closes, or closing would wait for them. */
  beforeApplicationShutdown(): void {
    this.shuttingDown = true;
    for (const handle of this.open) handle.stop();
  }

  /** Streams the changes of `caller`'s operations into `response` until the client or the app goes away. */
  async stream(caller: Caller, response: Response): Promise<void> {
    const streams = this.perOwner.get(caller.ownerId) ?? 0;
    if (streams >= STREAMS_PER_OWNER) throw new ApiError(429, 'too_many_streams', `at most ${STREAMS_PER_OWNER} event streams per caller are open at once`);
    this.perOwner.set(caller.ownerId, streams + 1);
    const handle = new StreamHandle(false);
    const pending = new Set<string>();
    let resync = false;
    // Subscribed before the headers go out: whatever commits after the client sees the stream open is sent.
    const subscription = this.events.events$.subscribe((signal) => {
      if (signal.kind === 'resync') resync = true;
      else if (signal.kind !== 'created' && signal.kind !== 'status') return;
      else {
        const owner = this.reads.ownerOf(signal.operationId);
        if (owner !== UNKNOWN_OWNER && !visibleTo(caller, owner)) return;
        pending.add(signal.operationId);
      }
      handle.poke();
    });
    const writer = new SseWriter(response, handle);
    writer.open();
    this.open.add(handle);
    try {
      while (!handle.stopped && !this.shuttingDown) {
        handle.changed = false;
        if (resync) {
          resync = false;
          writer.send('resync', {});
        }
        if (pending.size > 0) {
          const ids = [...pending];
          pending.clear();
          const found = await this.reads.read(ids);
          for (const id of ids) {
            const summary = found.get(id);
            if (summary && visibleTo(caller, summary.ownerId)) writer.send('operation', operationListItemView(summary));
          }
          await writer.drained();
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
      const left = (this.perOwner.get(caller.ownerId) ?? 1) - 1;
      if (left > 0) this.perOwner.set(caller.ownerId, left);
      else this.perOwner.delete(caller.ownerId);
      writer.end();
    }
  }
}
