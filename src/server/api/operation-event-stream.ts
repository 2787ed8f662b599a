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

/** A comment line now and then keeps proxies and load balancers from closing an idle stream. */
export const HEARTBEAT_MS = 15_000;

/** One open stream: stopped by its client, by shutdown, or when the operation completes. */
class StreamHandle {
  stopped = false;
  /** Something happened to the operation since the last read (or the stream just began). */
  changed = true;
  private wake: (() => void) | undefined;

  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  /** An event of the operation (or a resync): read again. */
  poke(): void {
    this.changed = true;
    this.wake?.();
  }

  /** Waits `ms`, or less if the operation changes or the stream stops meanwhile. */
  sleep(ms: number): Promise<void> {
    if (this.changed || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.wake = finish;
    });
  }
}

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
    response.status(200);
    response.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    response.setHeader('Cache-Control', 'no-cache, no-transform');
    response.setHeader('Connection', 'keep-alive');
    // nginx buffers responses unless told not to; events must arrive as they happen.
    response.setHeader('X-Accel-Buffering', 'no');
    response.flushHeaders();

    const handle = new StreamHandle();
    this.open.add(handle);
    response.on('close', () => handle.stop());
    // Subscribed before the first read: a commit made while it runs wakes the loop again.
    const subscription = this.events.of(operationId).subscribe(() => handle.poke());
    let lastWrite = Date.now();
    const send = (event: string, data: unknown, id?: string) => {
      if (response.writableEnded || response.destroyed) return;
      response.write(`${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      lastWrite = Date.now();
    };

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
        // Until an event, the next heartbeat or the safety re-check, whichever comes first.
        for (;;) {
          const now = Date.now();
          if (now - lastWrite >= HEARTBEAT_MS && !response.writableEnded) {
            response.write(': keep-alive\n\n');
            lastWrite = now;
          }
          const recheckIn = lastRead + this.settings.recheckMs - now;
          if (recheckIn <= 0 || handle.changed || handle.stopped || this.shuttingDown) break;
          await handle.sleep(Math.min(recheckIn, lastWrite + HEARTBEAT_MS - now));
        }
      }
    } catch (error) {
      this.logger.warn(`event stream of operation ${operationId} failed (${errorType(error)})`);
      send('error', { error: { code: 'internal', message: 'the event stream failed; reconnect to resume' } });
    } finally {
      subscription.unsubscribe();
      this.open.delete(handle);
      if (!response.writableEnded) response.end();
    }
  }
}
