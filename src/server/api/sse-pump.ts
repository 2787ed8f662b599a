/**
 * Pipes a read API observable (`OperationFollower`, `OperationChanges`) into one SSE response: each item
 * written as its event, a heartbeat comment while idle, the loop paced by what the client takes, and on a
 * failure one `error` event without its cause (logged by type only). Resolves when the observable ends,
 * which it does once the stream's handle stops (client gone, shutdown): the source loops share the handle.
 */
import type { Logger } from '@nestjs/common';
import { Subscription, type Observable } from 'rxjs';
import { errorType } from '../../hooks/hook-errors.js';
import type { SseWriter } from './sse-stream.js';

export interface SsePump<T> {
  /** Built over the writer's handle, so it ends when the stream does. */
  source: Observable<T>;
  writer: SseWriter;
  /** Writes one item as its event. */
  write(item: T): void;
  /** What the log says, and what the client is told, when the source fails. */
  failure: { logger: Logger; log: string; message: string };
}

export function pump<T>({ source, writer, write, failure }: SsePump<T>): Promise<void> {
  return new Promise<void>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    let finished = false;
    // Added to once subscribed: a source that ends at once unsubscribes what it is added to (closed already).
    const subscription = new Subscription();
    const beat = () => {
      timer = setTimeout(beat, writer.heartbeat());
    };
    const done = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      subscription.unsubscribe();
      resolve();
    };
    subscription.add(
      source.subscribe({
        next: write,
        error: (error: unknown) => {
          failure.logger.warn(`${failure.log} (${errorType(error)})`);
          writer.send('error', { error: { code: 'internal', message: failure.message } });
          done();
        },
        complete: done,
      }),
    );
    if (!finished) beat();
  });
}
