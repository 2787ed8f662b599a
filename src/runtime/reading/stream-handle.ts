/**
 * What a read loop that follows operations sleeps on (the library's `events()` / `changes()`, the SSE routes
 * over them): woken by an event, stopped by its subscriber, its client or the app's shutdown.
 */

/** One open stream: stopped by its client, by shutdown, or when its loop ends. */
export class StreamHandle {
  stopped = false;
  private wake: (() => void) | undefined;

  constructor(
    /** Something happened since the last read (a new stream reads at once). */
    public changed = true,
  ) {}

  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  /** An event (or a resync): read again. */
  poke(): void {
    this.changed = true;
    this.wake?.();
  }

  /** Waits `ms` (without end when not finite), or less if something changes or the stream stops meanwhile. */
  sleep(ms: number): Promise<void> {
    if (this.changed || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = () => {
        if (timer !== undefined) clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      // No timer for an endless wait: nothing but an event, the subscriber or shutdown should keep the process up for it.
      const timer = Number.isFinite(ms) ? setTimeout(finish, ms) : undefined;
      this.wake = finish;
    });
  }
}

/**
 * Runs a stream's read loop for one subscriber: its end completes the subscriber, its failure errors it,
 * and either way (or an unsubscribe, which stops the handle) `finish` releases what the stream held.
 * Returns the subscriber's teardown.
 */
export function runStreamLoop(loop: Promise<void>, subscriber: { complete(): void; error(error: unknown): void }, handle: StreamHandle, finish: () => void): () => void {
  loop.then(
    () => {
      finish();
      subscriber.complete();
    },
    (error: unknown) => {
      finish();
      subscriber.error(error);
    },
  );
  return () => {
    handle.stop();
    finish();
  };
}
