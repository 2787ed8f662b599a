/**
 * What every Server-Sent Events route of the API shares (`…/:id/events`, `/v1/events`): the response
 * headers, the event framing, a heartbeat comment on an idle stream, and a handle its loop sleeps on until
 * something happens, the client goes away or the app shuts down.
 */
import type { Response } from 'express';

/** A comment line now and then keeps proxies and load balancers from closing an idle stream. */
export const HEARTBEAT_MS = 15_000;

/** One open stream: stopped by its client, by shutdown, or when its loop ends. */
export class StreamHandle {
  stopped = false;
  /** Something happened since the last read (or the stream just began). */
  changed = true;
  private wake: (() => void) | undefined;

  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  /** An event (or a resync): read again. */
  poke(): void {
    this.changed = true;
    this.wake?.();
  }

  /** Waits `ms`, or less if something changes or the stream stops meanwhile. */
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

/** Writes events into one response; `idleFor` tells the loop when a heartbeat is due. */
export class SseWriter {
  private lastWrite = Date.now();

  constructor(private readonly response: Response) {}

  /** Sends the headers at once (the client knows the stream is open; later commits reach it). */
  open(): void {
    const response = this.response;
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

  send(event: string, data: unknown, id?: string): void {
    if (this.closed) return;
    this.response.write(`${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    this.lastWrite = Date.now();
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
