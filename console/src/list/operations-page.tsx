/**
 * The caller's operations (GET /v1/operations), newest first: status, agent, created, duration, steps,
 * tokens, cost; filters by status and agent (kept in the address, so a filtered view can be shared);
 * pages of 200 with "Load more". Live (use-live-list.ts): one stream of all the caller's changes
 * (GET /v1/events) updates the rows in place and brings in new operations, whichever process or client
 * started them; nothing polls.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiCallError, UnauthorizedError } from '../api/api-client.js';
import type { OperationSummary } from '../api/types.js';
import { formatCost, formatDuration, formatNumber, formatTime } from '../format.js';
import { statusSign } from '../outcomes.js';
import { afterPaint } from '../after-paint.js';
import type { LiveFilters, LiveState } from './live-list.js';
import { useLiveList } from './use-live-list.js';

/** The list's filters, kept in the address (the live list places changes by the same ones). */
export type ListFilters = LiveFilters;

const LIVE_TEXT: Record<LiveState, string> = {
  connecting: 'connecting for live updates…',
  live: 'updates live.',
  unavailable: 'this server sends no live updates (Refresh reads the list again).',
};
const STATUSES = ['', 'running', 'waiting', 'completed'] as const;

export function OperationsPage({ filters, onFilters, authEpoch }: { filters: ListFilters; onFilters: (next: ListFilters) => void; authEpoch: number }) {
  const [problem, setProblem] = useState<string>();
  // Refused for want of a key: the key form is shown; the list says so instead of "no operation".
  const [needsKey, setNeedsKey] = useState(false);
  // What is typed in the agent field; applied with the form (not on every key).
  const [agentText, setAgentText] = useState(filters.agentId);
  useEffect(() => setAgentText(filters.agentId), [filters.agentId]);

  const report = (error: unknown) => {
    if (error instanceof UnauthorizedError) {
      setNeedsKey(true); // the key form is shown
      return;
    }
    setProblem(
      error instanceof ApiCallError && error.status === 404
        ? 'This server has no operations list (GET /v1/operations). Open an operation by its id instead.'
        : error instanceof ApiCallError
          ? `The list could not be read (${error.status} ${error.code}): ${error.message}`
          : 'The server could not be reached.',
    );
  };

  // A new view (filters, key) starts without the old one's problems.
  useEffect(() => {
    setProblem(undefined);
    setNeedsKey(false);
  }, [filters.status, filters.agentId, authEpoch]);
  const { items, cursor, loading, live, refresh, loadMore } = useLiveList(filters, authEpoch, report);

  // Coming back to the tab: what happened meanwhile (a sleeping laptop may have lost events).
  useEffect(() => {
    const onVisible = () => document.visibilityState === 'visible' && refresh();
    document.addEventListener('visibilitychange', onVisible);
    return () => document.removeEventListener('visibilitychange', onVisible);
  }, [refresh]);

  const marked = useRef(-1);
  useLayoutEffect(() => {
    if (!loading && items.length !== marked.current) {
      marked.current = items.length;
      const count = items.length;
      // Committed to the DOM (script done), then laid out and painted.
      performance.mark('console:list-committed', { detail: count });
      afterPaint(() => performance.mark('console:list-rendered', { detail: count }));
    }
  }, [items, loading]);

  const agents = useMemo(() => [...new Set(items.map((item) => item.agentId))].sort(), [items]);
  const now = Date.now();
  return (
    <main id="main" tabIndex={-1}>
      <h2>Operations</h2>
      <form
        class="filters"
        aria-label="Filter operations"
        onSubmit={(event) => {
          event.preventDefault();
          onFilters({ ...filters, agentId: agentText.trim() });
        }}
      >
        <div class="field">
          <label for="filter-status">Status</label>
          <select id="filter-status" name="status" value={filters.status} onChange={(event) => onFilters({ ...filters, status: event.currentTarget.value })}>
            {STATUSES.map((status) => (
              <option key={status} value={status}>
                {status === '' ? 'any' : status}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="filter-agent">Agent</label>
          <input id="filter-agent" name="agentId" type="search" list="known-agents" value={agentText} onInput={(event) => setAgentText(event.currentTarget.value)} placeholder="any agent" autocomplete="off" />
          <datalist id="known-agents">
            {agents.map((agent) => (
              <option key={agent} value={agent} />
            ))}
          </datalist>
        </div>
        <button type="submit">Apply filters</button>
        <button type="button" onClick={refresh}>
          Refresh
        </button>
      </form>
      <OpenById />
      {problem ? (
        <p class="problem" role="alert">
          {problem}
        </p>
      ) : null}
      <p class="muted" role="status" aria-live="polite">
        {loading ? 'Loading…' : needsKey ? 'The operations are shown once the server accepts an API key.' : `${formatNumber(items.length)} operation${items.length === 1 ? '' : 's'} shown${cursor ? ' (more to load)' : ''}; ${LIVE_TEXT[live]}`}
      </p>
      <table class="operations">
        <caption class="visually-hidden">Operations, newest first</caption>
        {/* Fixed column widths: the browser lays out 1,000 rows without measuring every cell first. */}
        <colgroup>
          <col class="col-status" />
          <col class="col-id" />
          <col class="col-agent" />
          <col class="col-created" />
          <col class="col-num" />
          <col class="col-steps" />
          <col class="col-num" />
          <col class="col-num" />
        </colgroup>
        <thead>
          <tr>
            <th scope="col">Status</th>
            <th scope="col">Operation</th>
            <th scope="col">Agent</th>
            <th scope="col">Created</th>
            <th scope="col" class="num">Duration</th>
            <th scope="col" class="num">Steps</th>
            <th scope="col" class="num">Tokens</th>
            <th scope="col" class="num">Cost</th>
          </tr>
        </thead>
        <tbody>
          {items.map((item) => (
            <Row key={item.operationId} item={item} now={now} />
          ))}
        </tbody>
      </table>
      {!loading && items.length === 0 && !problem && !needsKey ? <p class="empty">No operation matches.</p> : null}
      {cursor ? (
        <button type="button" onClick={loadMore} disabled={loading}>
          Load more
        </button>
      ) : null}
    </main>
  );
}

function Row({ item, now }: { item: OperationSummary; now: number }) {
  const sign = statusSign(item.status, item.reason);
  const created = Date.parse(item.createdAt);
  const ended = item.status === 'completed' ? Date.parse(item.updatedAt) : now;
  return (
    <tr data-status={item.status}>
      <td>
        <span class={`badge tone-${sign.tone}`}>
          <span aria-hidden="true">{sign.symbol}</span> {sign.label}
        </span>
      </td>
      <td>
        <a href={`#/operations/${encodeURIComponent(item.operationId)}`} aria-label={`Operation ${item.operationId}`}>
          <code>{item.operationId.slice(0, 8)}</code>
        </a>
      </td>
      <td>{item.agentId}</td>
      <td>
        <time dateTime={item.createdAt}>{formatTime(item.createdAt)}</time>
      </td>
      <td class="num">
        {formatDuration(ended - created)}
        {item.status !== 'completed' ? <span class="muted"> so far</span> : null}
      </td>
      <td class="num">{formatNumber(item.steps)}</td>
      <td class="num">{formatNumber(item.usage.inputTokens + item.usage.outputTokens)}</td>
      <td class="num">{formatCost(item.usage.costUsd)}</td>
    </tr>
  );
}

function OpenById() {
  const [id, setId] = useState('');
  return (
    <form
      class="open-by-id"
      aria-label="Open an operation by id"
      onSubmit={(event) => {
        event.preventDefault();
        if (id.trim()) location.hash = `#/operations/${encodeURIComponent(id.trim())}`;
      }}
    >
      <div class="field">
        <label for="open-id">Operation id</label>
        <input id="open-id" type="text" value={id} onInput={(event) => setId(event.currentTarget.value)} autocomplete="off" spellcheck={false} />
      </div>
      <button type="submit">Open</button>
    </form>
  );
}
