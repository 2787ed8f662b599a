/**
 * `GET /v1/operations/:id/events` as Server-Sent Events (issue 7 item 3): `message` events carry each
 * published message (with its `seq` as the event id, so a reconnect with `Last-Event-ID` resumes after
 * it), `status` events the operation view whenever its status, reason or pending tools change. The stream
 * ends after the `completed` status. It follows the operation's events (DESIGN §4: this process's commits,
 * and on PostgreSQL every other process's), so it follows an operation whichever process drives it, and
 * reads the database only when one arrives, on a `resync`, and on the safety re-check every `recheckMs`;
 * it stops when the client goes away or the app shuts down.
 */
import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import type { Response } from 'express';
import { errorType } from '../../hooks/hook-errors.js';
import { OPERATION_EVENTS, type OperationEvents } from '../../runtime/operation-events.port.js';
import { RECOVERY_SETTINGS, type RecoverySettings } from '../../runtime/recovery-settings.js';
import { OperationReader } from './operation-reader.js';
import { messageView } from './operation-views.js';
import { SseWriter, StreamHandle } from './sse-stream.js';

@Injectable()
export class OperationEventStreams implements BeforeApplicationShutdown {
  private readonly logger = new Logger('OperationEvents');
  private readonly open = new Set<StreamHandle>();
  private shuttingDown = false;

  constructor(
    private readonly reader: OperationReader,
    @Inject(OPERATION_EVENTS) private readonly events: OperationEvents,
    @Inject(RECOVERY_SETTINGS) private readonly settings: Pick<RecoverySettings, 'recheckMs'>,
  ) {}

  /** Open streams end before the HTTP server closes, or closing would wait for them. */
  beforeApplicationShutdown(): void {
    this.shuttingDown = true;
    for (const handle of this.open) handle.stop();
  }

  /** Streams the operation's events into `response` until it completes; the caller checked ownership. */
  async stream(operationId: string, response: Response, afterSeq: number): Promise<void> {
    const handle = new StreamHandle();
    const writer = new SseWriter(response, handle);
    writer.open();
    this.open.add(handle);
    // Subscribed before the first read: a commit made while it runs wakes the loop again.
    const subscription = this.events.of(operationId).subscribe(() => handle.poke());
    const send = (event: string, data: unknown, id?: string) => writer.send(event, data, id);

    let lastSeq = afterSeq;
    let lastStatus: string | undefined;
    let lastVersion: number | undefined;
    let lastRead = 0;
    try {
      while (!handle.stopped && !this.shuttingDown) {
        handle.changed = false;
        lastRead = Date.now();
        // The operation first: once it reads completed, every message it published is already visible.
        const operation = await this.reader.find(operationId);
        if (!operation) break; // purged meanwhile: nothing more will come
        for (const message of await this.reader.messages(operationId, lastSeq)) {
          send('message', messageView(message), String(message.seq));
          lastSeq = message.seq;
        }
        // Pending items change with the version or while waiting (a decision is not a version bump).
        if (operation.version !== lastVersion || operation.status === 'waiting') {
          lastVersion = operation.version;
          const view = await this.reader.view(operation);
          const key = JSON.stringify([view.status, view.reason, view.pendingTools]);
          if (key !== lastStatus) {
            send('status', view);
            lastStatus = key;
          }
        }
        if (operation.status === 'completed') break;
        await writer.drained();
        // Until an event, the next heartbeat or the safety re-check, whichever comes first.
        for (;;) {
          const now = Date.now();
          const heartbeatIn = writer.heartbeat(now);
          const recheckIn = lastRead + this.settings.recheckMs - now;
          if (recheckIn <= 0 || handle.changed || handle.stopped || this.shuttingDown) break;
          await handle.sleep(Math.min(recheckIn, heartbeatIn));
        }
      }
    } catch (error) {
      this.logger.warn(`event stream of operation ${operationId} failed (${errorType(error)})`);
      send('error', { error: { code: 'internal', message: 'the event stream failed; reconnect to resume' } });
    } finally {
      subscription.unsubscribe();
      this.open.delete(handle);
      writer.end();
    }
  }
}
