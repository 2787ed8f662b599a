/**
 * One operation: its header (status, usage), pending work, the conversation and the hook waterfall.
 * Everything after the first read arrives over the operation's event stream: messages and status come in
 * the events themselves, and each burst of events also re-reads the timeline (the stream does not carry
 * it) — no timer polls anything. The answer being written (SPEC K5 `delta` events) shows as it comes and
 * gives way to its message once that is published.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiCallError, getJson, UnauthorizedError } from '../api/api-client.js';
import { followOperation } from '../api/event-stream.js';
import type { MessageView, OperationView, TimelineItem } from '../api/types.js';
import { formatCost, formatNumber } from '../format.js';
import { statusSign } from '../outcomes.js';
import { afterPaint } from '../after-paint.js';
import { Conversation } from './conversation.js';
import { PendingWork } from './pending-work.js';
import { Waterfall } from './waterfall.js';

type Connection = 'connecting' | 'live' | 'reconnecting' | 'ended';

export function OperationPage({ operationId, authEpoch }: { operationId: string; authEpoch: number }) {
  const [view, setView] = useState<OperationView>();
  const [messages, setMessages] = useState<MessageView[]>([]);
  const [writing, setWriting] = useState<{ stepIndex: number; text: string }>();
  const [timeline, setTimeline] = useState<TimelineItem[]>([]);
  const [argsByCall, setArgsByCall] = useState<ReadonlyMap<string, Record<string, unknown>>>(new Map());
  const [connection, setConnection] = useState<Connection>('connecting');
  const [problem, setProblem] = useState<string>();

  useEffect(() => {
    const abort = new AbortController();
    const { signal } = abort;
    setMessages([]);
    setWriting(undefined);
    setProblem(undefined);
    const seen = new Set<number>();

    // The timeline is re-read after events: one read at a time, one more if events came meanwhile.
    let reading = false;
    let again = false;
    const readTimeline = async () => {
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          const { items } = await getJson<{ items: TimelineItem[] }>(`v1/operations/${encodeURIComponent(operationId)}/timeline`, signal);
          performance.mark('console:timeline-data', { detail: items.length });
          setTimeline(items);
        } while (again && !signal.aborted);
      } catch (error) {
        if (!signal.aborted && !(error instanceof UnauthorizedError)) setProblem('The hook timeline could not be read.');
      } finally {
        reading = false;
      }
    };

    const remember = (next: OperationView) => {
      setView(next);
      if (next.pendingTools?.length) {
        setArgsByCall((known) => {
          const copy = new Map(known);
          for (const tool of next.pendingTools ?? []) copy.set(tool.toolCallId, tool.args);
          return copy;
        });
      }
    };

    getJson<OperationView>(`v1/operations/${encodeURIComponent(operationId)}`, signal).then(
      (first) => {
        remember(first);
        void readTimeline();
        void followOperation(
          operationId,
          {
            onEvent: (event) => {
              if (event.event === 'delta') {
                // The text so far of the step being written; a new step starts over. No timeline read per piece.
                const { stepIndex, text } = event.data;
                setWriting((now) => (now && now.stepIndex === stepIndex ? { stepIndex, text: now.text + text } : { stepIndex, text }));
                return;
              }
              if (event.event === 'status') {
                remember(event.data);
                if (event.data.status === 'completed') setWriting(undefined);
              } else if (!seen.has(event.seq)) {
                seen.add(event.seq);
                setMessages((list) => [...list, event.data]);
                // The published answer holds the whole text: it replaces what was being written.
                if (event.data.role === 'assistant') setWriting(undefined);
              }
              void readTimeline();
            },
            onConnection: (open) => setConnection(open ? 'live' : 'reconnecting'),
            onEnd: () => {
              setConnection('ended');
              void readTimeline();
            },
          },
          signal,
        );
      },
      (error: unknown) => {
        if (signal.aborted || error instanceof UnauthorizedError) return;
        setProblem(error instanceof ApiCallError && error.status === 404 ? 'There is no such operation (or it is not yours).' : 'The operation could not be read.');
      },
    );
    return () => abort.abort();
  }, [operationId, authEpoch]);

  // Approved or answered from the keyboard: the buttons are gone, so the focus goes to the section's heading
  // instead of falling back to the top of the page.
  const pendingTitle = useRef<HTMLHeadingElement>(null);
  const pendingCount = view?.pendingTools?.length ?? 0;
  const lastPending = useRef(0);
  useEffect(() => {
    const lost = document.activeElement === null || document.activeElement === document.body;
    if (lastPending.current > 0 && pendingCount === 0 && lost) pendingTitle.current?.focus();
    lastPending.current = pendingCount;
  }, [pendingCount]);

  // A performance mark once the timeline is in the page (the browser test reads it: issue 17 item 6).
  const marked = useRef(0);
  useLayoutEffect(() => {
    if (timeline.length > 0 && timeline.length !== marked.current) {
      marked.current = timeline.length;
      const count = timeline.length;
      // Committed to the DOM (script done), then laid out and painted.
      performance.mark('console:timeline-committed', { detail: count });
      afterPaint(() => performance.mark('console:timeline-rendered', { detail: count }));
    }
  }, [timeline]);

  if (problem && !view) {
    return (
      <main id="main" tabIndex={-1}>
        <p><a href="#/">← All operations</a></p>
        <p class="problem" role="alert">{problem}</p>
      </main>
    );
  }
  const sign = view ? statusSign(view.status, view.reason) : undefined;
  return (
    <main id="main" tabIndex={-1} class="operation-page" aria-busy={!view}>
      <p>
        <a href="#/">← All operations</a>
      </p>
      <header class="operation-head">
        <h2>
          Operation <code>{operationId}</code>
        </h2>
        {view && sign ? (
          <dl class="facts">
            <div>
              <dt>Agent</dt>
              <dd>{view.agentId}</dd>
            </div>
            <div>
              <dt>Status</dt>
              <dd>
                <span class={`badge tone-${sign.tone}`} data-testid="operation-status" data-status={view.status}>
                  <span aria-hidden="true">{sign.symbol}</span> {sign.label}
                </span>
              </dd>
            </div>
            <div>
              <dt>Tokens</dt>
              <dd>
                {formatNumber(view.usage.inputTokens)} in · {formatNumber(view.usage.outputTokens)} out
              </dd>
            </div>
            <div>
              <dt>Cost</dt>
              <dd>{formatCost(view.usage.costUsd)}</dd>
            </div>
            <div>
              <dt>Updates</dt>
              <dd>
                <span class={`connection connection-${connection}`} role="status">
                  {connection === 'live' ? '● live' : connection === 'reconnecting' ? '○ reconnecting…' : connection === 'ended' ? '■ finished: no more events' : '… connecting'}
                </span>
              </dd>
            </div>
          </dl>
        ) : (
          <p>Loading…</p>
        )}
        {view?.error ? (
          <p class="problem" role="alert">
            <span aria-hidden="true">⚠</span> {view.error.type}: {view.error.summary}
          </p>
        ) : null}
        {problem ? <p class="problem" role="alert">{problem}</p> : null}
      </header>
      <section aria-labelledby="pending-title" class="panel">
        <h3 id="pending-title" ref={pendingTitle} tabIndex={-1}>
          Pending work
        </h3>
        {view ? <PendingWork operationId={operationId} pending={view.pendingTools ?? []} /> : null}
      </section>
      <div class="two-columns">
        <section aria-labelledby="conversation-title" class="panel">
          <h3 id="conversation-title">Conversation</h3>
          <Conversation messages={messages} argsByCall={argsByCall} writing={writing?.text} />
        </section>
        <section aria-labelledby="timeline-title" class="panel">
          <h3 id="timeline-title">Hook timeline</h3>
          <Waterfall rows={timeline} messages={messages} />
        </section>
      </div>
    </main>
  );
}
