/**
 * The hook timeline as a waterfall: one bar per hook invocation on a shared time axis, grouped by step,
 * coloured by outcome and labelled with the outcome's word and symbol (colour is never the only sign).
 * Each bar is focusable; its details (hook id, source, latency, error code) show on hover and on focus.
 */
import { memo } from 'preact/compat';
import type { MessageView, TimelineItem } from '../api/types.js';
import { axisLabel, formatLatency } from '../format.js';
import { outcomeSign } from '../outcomes.js';
import { groupBySteps } from './step-groups.js';

interface Span {
  row: TimelineItem;
  start: number;
  end: number;
}

/** A row's `at` is when its outcome was recorded, at the end of the invocation: the bar ends there. */
function spanOf(row: TimelineItem): Span {
  const end = Date.parse(row.at);
  return { row, start: end - Math.max(0, row.latencyMs), end };
}

const TICKS = 5;

export const Waterfall = memo(function Waterfall({ rows, messages }: { rows: readonly TimelineItem[]; messages: readonly MessageView[] }) {
  if (rows.length === 0) return <p class="empty">No hook has run for this operation yet.</p>;
  const spans = new Map<number, Span>(rows.map((row) => [row.seq, spanOf(row)]));
  let first = Infinity;
  let last = -Infinity;
  for (const span of spans.values()) {
    first = Math.min(first, span.start);
    last = Math.max(last, span.end);
  }
  const total = Math.max(last - first, 1);
  const groups = groupBySteps(rows, messages);
  return (
    <div class="waterfall">
      <div class="waterfall-axis" aria-hidden="true">
        <span class="waterfall-axis-label">Hook · outcome</span>
        <span class="waterfall-axis-track">
          {Array.from({ length: TICKS + 1 }, (_, index) => (
            <span key={index} class="tick" style={{ left: `${(index / TICKS) * 100}%` }}>
              {axisLabel((total * index) / TICKS, total)}
            </span>
          ))}
        </span>
      </div>
      {groups.map((group) => (
        <section key={group.key} class="waterfall-group" aria-label={group.label}>
          <h4>
            {group.label} <span class="muted">({group.rows.length} {group.rows.length === 1 ? 'hook' : 'hooks'})</span>
          </h4>
          <ol class="waterfall-rows">
            {group.rows.map((row) => (
              <WaterfallRow key={row.seq} span={spans.get(row.seq)!} first={first} total={total} />
            ))}
          </ol>
        </section>
      ))}
    </div>
  );
});

function WaterfallRow({ span, first, total }: { span: Span; first: number; total: number }) {
  const { row } = span;
  const sign = outcomeSign(row.outcome);
  const left = ((span.start - first) / total) * 100;
  const width = ((span.end - span.start) / total) * 100;
  const tipId = `hook-tip-${row.seq}`;
  const summary = `#${row.seq} ${row.point} ${row.hookId}: ${sign.label}, ${formatLatency(row.latencyMs)}, source ${row.source}${row.errorCode ? `, error ${row.errorCode}` : ''}`;
  return (
    <li class={`waterfall-row tone-${sign.tone}`} data-outcome={row.outcome}>
      <span class="waterfall-label">
        <span class="waterfall-label-line">
          <span class="seq">#{row.seq}</span> <span class="point">{row.point}</span>
          <span class={`badge tone-${sign.tone}`}>
            <span aria-hidden="true">{sign.symbol}</span> {sign.label}
          </span>
        </span>
        <span class="hook-id" title={row.hookId}>
          {row.hookId}
          {row.errorCode ? <span class="error-code"> · {row.errorCode}</span> : null}
        </span>
      </span>
      <span class="waterfall-track">
        <span
          class={`bar tone-${sign.tone}`}
          tabIndex={0}
          role="img"
          aria-label={summary}
          aria-describedby={tipId}
          style={{ left: `${Math.min(left, 99.5)}%`, width: `max(${width}%, 3px)` }}
        />
        <span class="tip" id={tipId} role="tooltip" style={{ left: `min(${Math.min(left, 99.5)}%, calc(100% - 16rem))` }}>
          <strong>{row.hookId}</strong>
          <span>
            {row.point} · source {row.source}
          </span>
          <span>
            <span aria-hidden="true">{sign.symbol}</span> {sign.label} · {formatLatency(row.latencyMs)}
          </span>
          {row.errorCode ? <span>error code {row.errorCode}</span> : null}
          <span class="muted">{row.at}</span>
        </span>
      </span>
    </li>
  );
}
