/**
 * `GET /v1/events` (v0.2, DESIGN §7): one Server-Sent Events stream of the changes to all of the caller's
 * operations, over the runtime's `OperationChanges` (the source of `runtime.changes()` too), so a list (the
 * console's) shows an operation started or finished by anyone, in any process, without re-reading. Each
 * `operation` event is the operation's list item (`GET /v1/operations` item shape) after a change; a
 * `resync` event says events may have been missed and the client should re-read its list. The stream
 * never ends on its own; it stops when the client goes away, falls too far behind, or the app shuts down.
 */
import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import type { Response } from 'express';
import { OperationChanges } from '../../runtime/reading/operation-changes.js';
import { StreamHandle } from '../../runtime/reading/stream-handle.js';
import { ApiError } from './api-error.js';
import type { Caller } from './caller.js';
import { ownerFilterOf } from './operation-reader.js';
import { pump } from './sse-pump.js';
import { SseWriter } from './sse-stream.js';

/** Open caller streams per owner: a console needs one per tab; beyond this a key is refused (429). */
export const STREAMS_PER_OWNER = 16;

@Injectable()
export class CallerEventStreams implements BeforeApplicationShutdown {
  private readonly logger = new Logger('CallerEvents');
  private readonly open = new Set<StreamHandle>();
  private readonly perOwner = new Map<string, number>();

  constructor(private readonly changes: OperationChanges) {}

  /** Open streams end before the HTTP server closes, or closing would wait for them. */
  beforeApplicationShutdown(): void {
    for (const handle of this.open) handle.stop();
  }

  /** Streams the changes of `caller`'s operations into `response` until the client or the app goes away. */
  async stream(caller: Caller, response: Response): Promise<void> {
    const streams = this.perOwner.get(caller.ownerId) ?? 0;
    if (streams >= STREAMS_PER_OWNER) throw new ApiError(429, 'too_many_streams', `at most ${STREAMS_PER_OWNER} event streams per caller are open at once`);
    this.perOwner.set(caller.ownerId, streams + 1);
    const handle = new StreamHandle(false);
    const writer = new SseWriter(response, handle);
    this.open.add(handle);
    try {
      // Subscribed before the headers go out: whatever commits after the client sees the stream open is sent.
      const piping = pump({
        source: this.changes.changes({ ...ownerFilterOf(caller), paced: () => writer.drained(), handle }),
        writer,
        write: (change) => {
          if (change.type === 'resync') writer.send('resync', {});
          else writer.send('operation', change.operation);
        },
        failure: { logger: this.logger, log: 'the caller event stream failed', message: 'the event stream failed; reconnect and re-read the list' },
      });
      writer.open();
      await piping;
    } finally {
      this.open.delete(handle);
      const left = (this.perOwner.get(caller.ownerId) ?? 1) - 1;
      if (left > 0) this.perOwner.set(caller.ownerId, left);
      else this.perOwner.delete(caller.ownerId);
      writer.end();
    }
  }
}
