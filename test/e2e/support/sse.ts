/** Reads a Server-Sent Events response to its end (or a deadline), as a client would. */

export interface SseEvent {
  event: string;
  id?: string;
  data: any;
}

/** `onEvent` sees each event as it arrives (to act while the stream is open). */
export async function readEvents(response: Response, timeoutMs = 15_000, onEvent?: (event: SseEvent) => void): Promise<{ events: SseEvent[]; ended: boolean }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const events: SseEvent[] = [];
  let buffer = '';
  const timer = setTimeout(() => void reader.cancel(), timeoutMs);
  let ended = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        break;
      }
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields: Record<string, string> = {};
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue; // a comment (keep-alive)
          const colon = line.indexOf(':');
          fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
        }
        if (fields.data === undefined) continue;
        const event: SseEvent = { event: fields.event ?? 'message', ...(fields.id !== undefined ? { id: fields.id } : {}), data: JSON.parse(fields.data) };
        events.push(event);
        onEvent?.(event);
      }
    }
  } catch {
    ended = false;
  } finally {
    clearTimeout(timer);
  }
  return { events, ended };
}

/**
 * Reads the stream like `readEvents`, and resolves `seen` at the first event that `matches` (rejects if the
 * stream ends first): the sign that the stream is open and sending, to act on while it is.
 */
export function watchEvents(response: Response, matches: (event: SseEvent) => boolean, timeoutMs = 15_000): { seen: Promise<void>; reading: Promise<{ events: SseEvent[]; ended: boolean }> } {
  let found!: () => void;
  let missed!: (error: Error) => void;
  const seen = new Promise<void>((resolve, reject) => {
    found = resolve;
    missed = reject;
  });
  const reading = readEvents(response, timeoutMs, (event) => {
    if (matches(event)) found();
  });
  // Settles `seen` if the stream ended without the event (a no-op once it was seen); readEvents never rejects.
  void reading.then(() => missed(new Error('the event stream ended before the awaited event')));
  return { seen, reading };
}
