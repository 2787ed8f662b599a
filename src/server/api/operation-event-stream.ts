/**
 * `GET /v1/operations/:id/events` as Server-Sent Events (issue 7 item 3): `message` events carry each
 * published message (with its `seq` as the event id, so a reconnect with `Last-Event-ID` resumes after
 * it), `status` events the operation view whenever its status, reason or pending tools change. The stream
 * ends after the `completed` status. It polls the database, so it follows an operation whichever process
 * drives it; it stops polling when the client goes away or the app shuts down.
 */
import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import type { Response } from 'express';
import { errorType } from '../../hooks/hook-errors.js';
import { OperationReader } from './operation-reader.js';
import { messageView } from './operation-views.js';

/** Between polls: well under what a person notices, and a few cheap reads per second per stream. */
export const EVENT_POLL_MS = 100;
/** A comment line now and then keeps proxies and load balancers from closing an idle stream. */
const HEARTBEAT_MS = 15_000;

/** One open stream: stopped by its client, by shutdown, or when the operation completes. */
class StreamHandle {
  stopped = false;
  private wake: (() => void) | undefined;

  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  /** Waits `ms`, or less if the stream is stopped meanwhile. */
  sleep(ms: number): Promise<void> {
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

  constructor(private readonly reader: OperationReader) {}

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
    let lastWrite = Date.now();
    const send = (event: string, data: unknown, id?: string) => {
      if (response.writableEnded || response.destroyed) return;
      response.write(`${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      lastWrite = Date.now();
    };

    let lastSeq = afterSeq;
    let lastStatus: string | undefined;
    let lastVersion: number | undefined;
    try {
      while (!handle.stopped && !this.shuttingDown) {
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
        if (Date.now() - lastWrite >= HEARTBEAT_MS && !response.writableEnded) {
          response.write(': keep-alive\n\n');
          lastWrite = Date.now();
        }
        await handle.sleep(EVENT_POLL_MS);
      }
    } catch (error) {
      this.logger.warn(`event stream of operation ${operationId} failed (${errorType(error)})`);
      send('error', { error: { code: 'internal', message: 'the event stream failed; reconnect to resume' } });
    } finally {
      this.open.delete(handle);
      if (!response.writableEnded) response.end();
    }
  }
}
