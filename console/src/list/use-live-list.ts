/**
 * The list's data, live. For each view (filters and key) it reads the first page, opens the caller's
 * stream (GET /v1/events) and places every change it sends; when the stream (re)opens or says `resync`
 * the first page is read again. Reads run one at a time, and one asked for while another runs runs once
 * more after it (that one may have begun before what prompted the request). Everything of a view —
 * reads, "Load more", the stream — is dropped when the view changes, so no answer of an old filter lands
 * in the new list. Nothing polls.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { getJson } from '../api/api-client.js';
import { followCaller } from '../api/event-stream.js';
import type { OperationPage, OperationSummary } from '../api/types.js';
import { mergeHead, placeChange, type LiveFilters, type LiveState } from './live-list.js';

export const PAGE_SIZE = 200;

function query(filters: LiveFilters, cursor?: string): string {
  const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (filters.status) params.set('status', filters.status);
  if (filters.agentId) params.set('agentId', filters.agentId);
  if (cursor) params.set('cursor', cursor);
  return `v1/operations?${params.toString()}`;
}

/** One view's reads: aborted together when the view changes. */
interface View {
  signal: AbortSignal;
  readHead(): void;
}

export interface LiveList {
  items: OperationSummary[];
  /** More pages follow. */
  cursor: string | undefined;
  loading: boolean;
  live: LiveState;
  refresh(): void;
  loadMore(): void;
}

export function useLiveList(filters: LiveFilters, authEpoch: number, report: (error: unknown) => void): LiveList {
  const [items, setItems] = useState<OperationSummary[]>([]);
  const [cursor, setCursor] = useState<string>();
  const [loading, setLoading] = useState(true);
  const [live, setLive] = useState<LiveState>('connecting');
  const view = useRef<View | undefined>(undefined);
  const reportRef = useRef(report);
  reportRef.current = report;
  const cursorRef = useRef(cursor);
  cursorRef.current = cursor;

  useEffect(() => {
    const abort = new AbortController();
    const signal = abort.signal;
    let reading = false;
    let again = false;
    let first = true;
    setItems([]);
    setCursor(undefined);
    setLoading(true);
    setLive('connecting');
    const readHead = () => {
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      again = false;
      getJson<OperationPage>(query(filters), signal)
        .then(
          (page) => {
            if (signal.aborted) return;
            if (first) {
              first = false;
              performance.mark('console:list-data', { detail: page.items.length });
              setCursor(page.nextCursor);
            }
            setItems((loaded) => mergeHead(loaded, page.items));
          },
          // A read of a view left meanwhile is no failure.
          (error: unknown) => signal.aborted || reportRef.current(error),
        )
        .finally(() => {
          if (signal.aborted) return;
          reading = false;
          setLoading(false);
          if (again) readHead();
        });
    };
    view.current = { signal, readHead };
    readHead();
    void followCaller(
      {
        onOperation: (item) => setItems((list) => placeChange(list, item, filters, cursorRef.current !== undefined)),
        onResync: () => {
          setLive('live');
          readHead();
        },
        onConnection: (open) => open || setLive('connecting'),
        onUnavailable: () => setLive('unavailable'),
      },
      signal,
    );
    return () => abort.abort();
  }, [filters.status, filters.agentId, authEpoch]);

  const refresh = useCallback(() => view.current?.readHead(), []);

  const loadMore = useCallback(() => {
    const current = view.current;
    const after = cursorRef.current;
    if (!current || !after) return;
    setLoading(true);
    getJson<OperationPage>(query(filters, after), current.signal)
      .then(
        (page) => {
          if (current.signal.aborted) return;
          setItems((loaded) => mergeHead(loaded, page.items));
          setCursor(page.nextCursor);
        },
        (error: unknown) => current.signal.aborted || reportRef.current(error),
      )
      .finally(() => current.signal.aborted || setLoading(false));
  }, [filters.status, filters.agentId]);

  return { items, cursor, loading, live, refresh, loadMore };
}
