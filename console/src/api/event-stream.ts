/**
 * The API's Server-Sent Events read with fetch and a stream parser (EventSource cannot send the
 * Authorization header). GET /v1/operations/:id/events: `message` events carry a published message (id =
 * its seq), `status` events the operation view; the server ends the stream after the completed status, and
 * a stream cut before that is reopened with `Last-Event-ID`, so no message is lost or repeated. `delta`
 * events (SPEC K5) carry the text a model is writing, live only (no id): the message that follows holds it all.
 * GET /v1/events: the caller's operations as list items after each change; reopened when cut.
 */
import { apiUrl, authHeaders, checkAuthorized, UnauthorizedError } from './api-client.js';
import type { MessageView, OperationSummary, OperationView } from './types.js';

export type OperationEvent =
  | { event: 'message'; seq: number; data: MessageView }
  | { event: 'status'; data: OperationView }
  | { event: 'delta'; data: { stepIndex: number; text: string } };

export interface EventStreamHandlers {
  onEvent(event: OperationEvent): void;
  /** The connection is open (true) or lost and being retried (false). */
  onConnection?(open: boolean): void;
  /** The stream ended after the operation completed. */
  onEnd?(): void;
}

/** Splits the text of a stream into events; keeps the unfinished tail for the next chunk. */
export class SseParser {
  private buffer = '';

  push(chunk: string): { event: string; id?: string; data: string }[] {
    this.buffer += chunk.replace(/\r\n?/g, '\n');
    const out: { event: string; id?: string; data: string }[] = [];
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let event = 'message';
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line === '' || line.startsWith(':')) continue; // a keep-alive comment
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = value;
        else if (field === 'id') id = value;
        else if (field === 'data') data.push(value);
      }
      if (data.length > 0) out.push({ event, ...(id !== undefined ? { id } : {}), data: data.join('\n') });
    }
    return out;
  }
}

const RETRY_MS = [500, 1_000, 2_000, 5_000];
/** A connection counts as healthy (the pause before the next reconnect starts short again) after this long or its first event. */
const HEALTHY_AFTER_MS = 5_000;
/** Answers that retrying will not change: a bad or unknown id, no such route (an older server). */
const FINAL_STATUSES = new Set([400, 404, 405, 410]);

type RawEvent = { event: string; id?: string; data: string };

/**
 * Reads the SSE stream at `path` until `onRaw` says it is over (true) or `signal` aborts; a stream cut
 * before that (server restart, proxy timeout) is reopened after a short, growing pause, with the headers
 * `headers()` gives then (a `Last-Event-ID`). `onOpen` runs each time a connection is established.
 */
async function followStream(path: string, handlers: { headers?(): Record<string, string>; onOpen?(): void; onRaw(raw: RawEvent): boolean; onConnection?(open: boolean): void; onEnd?(): void }, signal: AbortSignal): Promise<void> {
  let failures = 0;
  while (!signal.aborted) {
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream', ...authHeaders(), ...handlers.headers?.() };
      const response = await fetch(apiUrl(path), { headers, signal, cache: 'no-store' });
      checkAuthorized(response, headers);
      if (FINAL_STATUSES.has(response.status)) {
        handlers.onEnd?.();
        return;
      }
      // Anything else (a proxy's 429 or 502, a restart) is retried with a growing pause.
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      handlers.onConnection?.(true);
      handlers.onOpen?.();
      const openedAt = Date.now();
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new SseParser();
      let over = false;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const raw of parser.push(value)) {
          // A stream that opens and is cut at once (a proxy's short idle timeout, the server's `error`
          // event) must not reconnect, and make its client re-read, every half second.
          if (raw.event !== 'error') failures = 0;
          over = handlers.onRaw(raw) || over;
        }
      }
      if (Date.now() - openedAt >= HEALTHY_AFTER_MS) failures = 0;
      if (over) {
        handlers.onEnd?.();
        return;
      }
    } catch (error) {
      if (signal.aborted || error instanceof UnauthorizedError) return;
    }
    handlers.onConnection?.(false);
    await pause(RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)]!, signal);
  }
}

/** Follows the operation's events until it completes or `signal` aborts; a reconnect resumes after the last message. */
export function followOperation(operationId: string, handlers: EventStreamHandlers, signal: AbortSignal): Promise<void> {
  let lastSeq: number | undefined;
  return followStream(
    `v1/operations/${encodeURIComponent(operationId)}/events`,
    {
      headers: (): Record<string, string> => (lastSeq !== undefined ? { 'last-event-id': String(lastSeq) } : {}),
      onRaw: (raw) => {
        if (raw.event === 'message') {
          const seq = Number(raw.id);
          if (Number.isSafeInteger(seq)) lastSeq = seq;
          handlers.onEvent({ event: 'message', seq, data: JSON.parse(raw.data) as MessageView });
        } else if (raw.event === 'status') {
          const view = JSON.parse(raw.data) as OperationView;
          handlers.onEvent({ event: 'status', data: view });
          return view.status === 'completed';
        } else if (raw.event === 'delta') {
          handlers.onEvent({ event: 'delta', data: JSON.parse(raw.data) as { stepIndex: number; text: string } });
        }
        return false;
      },
      ...(handlers.onConnection ? { onConnection: handlers.onConnection } : {}),
      ...(handlers.onEnd ? { onEnd: handlers.onEnd } : {}),
    },
    signal,
  );
}

export interface CallerStreamHandlers {
  /** One of the caller's operations after a change, as the list shows it. */
  onOperation(item: OperationSummary): void;
  /**
   * Changes may have been missed: the stream (re)opened, or the server said so (`resync`). Re-read the
   * list; the stream is open at this point, so nothing after the re-read is missed.
   */
  onResync(): void;
  /** The server has no caller stream (an older one): the list updates on Refresh and on return to the tab only. */
  onUnavailable?(): void;
  /** The connection is open (true) or lost and being retried (false). */
  onConnection?(open: boolean): void;
}

/** Follows GET /v1/events, the changes of all of the caller's operations, until `signal` aborts. */
export function followCaller(handlers: CallerStreamHandlers, signal: AbortSignal): Promise<void> {
  return followStream(
    'v1/events',
    {
      onOpen: () => handlers.onResync(),
      onRaw: (raw) => {
        if (raw.event === 'operation') handlers.onOperation(JSON.parse(raw.data) as OperationSummary);
        else if (raw.event === 'resync') handlers.onResync();
        return false;
      },
      ...(handlers.onUnavailable ? { onEnd: handlers.onUnavailable } : {}),
      ...(handlers.onConnection ? { onConnection: handlers.onConnection } : {}),
    },
    signal,
  );
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
