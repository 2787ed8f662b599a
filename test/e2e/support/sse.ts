/** Reads a Server-Sent Events response to its end (or a deadline), as a client would. */

export interface SseEvent {
  event: string;
  id?: string;
  data: any;
}

export async function readEvents(response: Response, timeoutMs = 15_000): Promise<{ events: SseEvent[]; ended: boolean }> {
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
        events.push({ event: fields.event ?? 'message', ...(fields.id !== undefined ? { id: fields.id } : {}), data: JSON.parse(fields.data) });
      }
    }
  } catch {
    ended = false;
  } finally {
    clearTimeout(timer);
  }
  return { events, ended };
}
