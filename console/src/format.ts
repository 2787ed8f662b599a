/** How numbers and times read on the page: one place, so the list and the detail agree. */

const numberFormat = new Intl.NumberFormat('en');
const timeFormat = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'medium' });

export function formatNumber(value: number): string {
  return numberFormat.format(value);
}

export function formatCost(usd: number): string {
  if (usd === 0) return '$0';
  if (usd >= 0.01) return `$${usd.toFixed(2)}`;
  // Small costs keep two significant digits: $0.000024, not $0.0000.
  return `$${Number(usd.toPrecision(2))
    .toFixed(Math.min(12, 1 - Math.floor(Math.log10(usd))))
    .replace(/0+$/, '')}`;
}

export function formatTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : timeFormat.format(date);
}

export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ${Math.round((ms % 60_000) / 1_000)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

export function formatLatency(ms: number): string {
  return ms < 10 ? `${ms.toFixed(2)} ms` : formatDuration(ms);
}

/** Axis labels: one unit and one precision for the whole axis, picked by its span. */
export function axisLabel(ms: number, spanMs: number): string {
  if (spanMs >= 1_000) return `${(ms / 1_000).toFixed(spanMs >= 50_000 ? 0 : spanMs >= 5_000 ? 1 : 2)} s`;
  if (spanMs >= 50) return `${Math.round(ms)} ms`;
  if (spanMs >= 5) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}
