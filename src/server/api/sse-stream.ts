/**
 * What every Server-Sent Events route of the API shares (`…/:id/events`, `/v1/events`): the response
 * headers, the event framing, a heartbeat comment on an idle stream, a cap on what a client that stopped
 * reading may leave buffered; the client going away stops the stream's handle (`StreamHandle`).
 */
import type { Response } from 'express';
import type { StreamHandle } from '../../runtime/reading/stream-handle.js';

/** A comment line now and then keeps proxies and load balancers from closing an idle stream. */
export const HEARTBEAT_MS = 15_000;

/**
 * What a client that stopped reading may leave buffered before its stream is cut (it reconnects and
 * re-reads): a half-open connection must not hold every change of a busy server in memory.
 */
export const MAX_BUFFERED_BYTES = 1024 * 1024;

/** Writes the events of one stream into its response; `heartbeat()` tells the loop when the next keep-alive is due. */
export class SseWriter {
  private lastWrite = Date.now();

  constructor(
    private readonly response: Response,
    private readonly handle: StreamHandle,
  ) {}

  /**
   * Sends the headers at once (the client knows the stream is open; later commits reach it), and stops the
   * handle when the client goes away — also when it went away before the route ran: then no 'close' comes.
   */
  open(): void {
    const response = this.response;
    response.on('close', () => this.handle.stop());
    if (this.closed) {
      this.handle.stop();
      return;
    }
    response.status(200);
    response.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    response.setHeader('Cache-Control', 'no-cache, no-transform');
    response.setHeader('Connection', 'keep-alive');
    // nginx buffers responses unless told not to; events must arrive as they happen.
    response.setHeader('X-Accel-Buffering', 'no');
    response.flushHeaders();
  }

  get closed(): boolean {
    return this.response.writableEnded || this.response.destroyed;
  }

  /** Writes one event; a client that let more than MAX_BUFFERED_BYTES pile up is cut off. */
  send(event: string, data: unknown, id?: string): void {
    if (this.closed) return;
    this.response.write(`${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    this.lastWrite = Date.now();
    if (this.response.writableLength > MAX_BUFFERED_BYTES) {
      this.handle.stop();
      this.response.destroy();
    }
  }

  /** Resolves once what was written went to the socket (at once when nothing waits), or the stream stopped. */
  drained(): Promise<void> {
    const response = this.response;
    if (!response.writableNeedDrain || this.closed || this.handle.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        response.off('drain', done);
        response.off('close', done);
        resolve();
      };
      response.on('drain', done);
      response.on('close', done);
    });
  }

  /** Writes the keep-alive comment when the stream was idle for HEARTBEAT_MS; returns ms until the next one is due. */
  heartbeat(now = Date.now()): number {
    if (now - this.lastWrite >= HEARTBEAT_MS && !this.closed) {
      this.response.write(': keep-alive\n\n');
      this.lastWrite = now;
    }
    return this.lastWrite + HEARTBEAT_MS - now;
  }

  end(): void {
    if (!this.response.writableEnded) this.response.end();
  }
}
