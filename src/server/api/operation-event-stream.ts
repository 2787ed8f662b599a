/**
 * `GET /v1/operations/:id/events` as Server-Sent Events (DESIGN §7), over the runtime's `OperationFollower`
 * (the source of `runtime.events()` too): `message` events carry each published message (with its `seq` as
 * the event id, so a reconnect with `Last-Event-ID` resumes after it), `status` events the operation view
 * whenever its status, reason or pending tools change. The stream ends after the `completed` status, when
 * the client goes away or when the app shuts down.
 */
import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import type { Response } from 'express';
import { OperationFollower } from '../../runtime/reading/operation-follower.js';
import { StreamHandle } from '../../runtime/reading/stream-handle.js';
import { pump } from './sse-pump.js';
import { SseWriter } from './sse-stream.js';

@Injectable()
export class OperationEventStreams implements BeforeApplicationShutdown {
  private readonly logger = new Logger('OperationEvents');
  private readonly open = new Set<StreamHandle>();

  constructor(private readonly follower: OperationFollower) {}

  /** Open streams end before the HTTP server closes, or closing would wait for them. */
  beforeApplicationShutdown(): void {
    for (const handle of this.open) handle.stop();
  }

  /** Streams the operation's events into `response` until it completes; the caller checked ownership. */
  async stream(operationId: string, response: Response, afterSeq: number): Promise<void> {
    const handle = new StreamHandle();
    const writer = new SseWriter(response, handle);
    writer.open();
    this.open.add(handle);
    try {
      await pump({
        source: this.follower.follow(operationId, { afterSeq, paced: () => writer.drained(), handle }),
        writer,
        write: (event) => {
          if (event.type === 'message') writer.send('message', event.message, String(event.seq));
          else if (event.type === 'status') writer.send('status', event.operation);
          // SPEC K5: a delta is sent without an id (a reconnect resumes after messages, not pieces of one).
          else writer.send('delta', { stepIndex: event.stepIndex, text: event.text });
        },
        failure: { logger: this.logger, log: `event stream of operation ${operationId} failed`, message: 'the event stream failed; reconnect to resume' },
      });
    } finally {
      this.open.delete(handle);
      writer.end();
    }
  }
}
