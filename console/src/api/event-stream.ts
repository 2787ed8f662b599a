/**
 * GET /v1/operations/:id/events read with fetch and a stream parser: EventSource cannot send the
 * Authorization header. `message` events carry a published message (id = its seq), `status` events the
 * operation view; the server ends the stream after the completed status. A stream cut before that is
 * reopened with `Last-Event-ID`, so no message is lost or repeated.
 */
import { apiUrl, authHeaders, checkAuthorized, UnauthorizedError } from './api-client.js';
import type { MessageView, OperationView } from './types.js';

export type OperationEvent = { event: 'message'; seq: number; data: MessageView } | { event: 'status'; data: OperationView };

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

/** Follows the operation's events until it completes or `signal` aborts. */
export async function followOperation(operationId: string, handlers: EventStreamHandlers, signal: AbortSignal): Promise<void> {
  let lastSeq: number | undefined;
  let failures = 0;
  while (!signal.aborted) {
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream', ...authHeaders() };
      if (lastSeq !== undefined) headers['last-event-id'] = String(lastSeq);
      const response = await fetch(apiUrl(`v1/operations/${encodeURIComponent(operationId)}/events`), { headers, signal, cache: 'no-store' });
      checkAuthorized(response, headers);
      // A 4xx (not found, bad id) will not change by retrying.
      if (response.status >= 400 && response.status < 500) {
        handlers.onEnd?.();
        return;
      }
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      handlers.onConnection?.(true);
      failures = 0;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new SseParser();
      let completed = false;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const raw of parser.push(value)) {
          if (raw.event === 'message') {
            const seq = Number(raw.id);
            if (Number.isSafeInteger(seq)) lastSeq = seq;
            handlers.onEvent({ event: 'message', seq, data: JSON.parse(raw.data) as MessageView });
          } else if (raw.event === 'status') {
            const view = JSON.parse(raw.data) as OperationView;
            if (view.status === 'completed') completed = true;
            handlers.onEvent({ event: 'status', data: view });
          }
        }
      }
      if (completed) {
        handlers.onEnd?.();
        return;
      }
    } catch (error) {
      if (signal.aborted || error instanceof UnauthorizedError) return;
    }
    // Cut before the end (server restart, proxy timeout): reconnect after a short, growing pause.
    handlers.onConnection?.(false);
    await pause(RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)]!, signal);
  }
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
