/**
 * Live list updates. Each visible operation that is not completed is followed over its own event stream
 * (at most MAX_STREAMS at once: a browser keeps about six HTTP/1.1 connections per server, and the page's
 * own calls must still get through); a status change on one of them re-reads the first page, which also
 * brings in newer operations. Nothing polls.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { followOperation } from '../api/event-stream.js';
import type { OperationView } from '../api/types.js';

export const MAX_STREAMS = 3;

/** The ids of rows on screen, by an IntersectionObserver on elements marked `data-live-id`. */
export function useVisibleIds(container: { current: HTMLElement | null }, watchKey: unknown): ReadonlySet<string> {
  const [visible, setVisible] = useState<ReadonlySet<string>>(new Set());
  useEffect(() => {
    const root = container.current;
    if (!root) return;
    const shown = new Set<string>();
    const observer = new IntersectionObserver((entries) => {
      let changed = false;
      for (const entry of entries) {
        const id = (entry.target as HTMLElement).dataset.liveId;
        if (!id) continue;
        if (entry.isIntersecting && !shown.has(id)) {
          shown.add(id);
          changed = true;
        } else if (!entry.isIntersecting && shown.delete(id)) {
          changed = true;
        }
      }
      if (changed) setVisible(new Set(shown));
    });
    root.querySelectorAll<HTMLElement>('[data-live-id]').forEach((element) => observer.observe(element));
    return () => observer.disconnect();
  }, [container, watchKey]);
  return visible;
}

/** Follows `ids` (the first MAX_STREAMS); `onStatus` gets each status event. */
export function useFollowed(ids: readonly string[], onStatus: (view: OperationView) => void): void {
  const callback = useRef(onStatus);
  callback.current = onStatus;
  const streams = useRef(new Map<string, AbortController>());
  const wanted = ids.slice(0, MAX_STREAMS);
  const key = wanted.join(',');
  useEffect(() => {
    const open = streams.current;
    for (const [id, abort] of open) {
      if (!wanted.includes(id)) {
        abort.abort();
        open.delete(id);
      }
    }
    for (const id of wanted) {
      if (open.has(id)) continue;
      const abort = new AbortController();
      open.set(id, abort);
      void followOperation(id, { onEvent: (event) => event.event === 'status' && callback.current(event.data), onEnd: () => open.delete(id) }, abort.signal);
    }
    // `key` stands for `wanted`: the effect runs when the set of followed ids changes, not on every render.
  }, [key]);
  useEffect(
    () => () => {
      for (const abort of streams.current.values()) abort.abort();
      streams.current.clear();
    },
    [],
  );
}
