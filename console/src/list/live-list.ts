/**
 * How the loaded list takes in what arrives: a change from GET /v1/events (`placeChange`) and a re-read
 * first page (`mergeHead`). Whatever arrives, the newer copy of a row wins — a read answered after an
 * event may have been made before it — and the list stays in its order (createdAt, then id, newest
 * first). A new operation that matches the filters goes where the order puts it, unless it is older than
 * everything loaded while more pages remain (it comes with "Load more"); a known row that stops matching
 * the status filter stays, updated: rows do not vanish under the reader.
 */
import type { OperationSummary } from '../api/types.js';

export type LiveState = 'connecting' | 'live' | 'unavailable';

export interface LiveFilters {
  status: string;
  agentId: string;
}

export const newerFirst = (a: OperationSummary, b: OperationSummary): number =>
  a.createdAt === b.createdAt ? (a.operationId < b.operationId ? 1 : a.operationId > b.operationId ? -1 : 0) : a.createdAt < b.createdAt ? 1 : -1;

/** Whether `a` is an older state of the same operation than `b` (completed is final; then updatedAt, then steps). */
export function isStaler(a: OperationSummary, b: OperationSummary): boolean {
  if ((a.status === 'completed') !== (b.status === 'completed')) return b.status === 'completed';
  if (a.updatedAt !== b.updatedAt) return a.updatedAt < b.updatedAt;
  return a.steps < b.steps;
}

export function placeChange(list: readonly OperationSummary[], item: OperationSummary, filters: LiveFilters, morePages: boolean): OperationSummary[] {
  const index = list.findIndex((known) => known.operationId === item.operationId);
  if (index >= 0) {
    if (isStaler(item, list[index]!)) return list as OperationSummary[];
    const next = list.slice();
    next[index] = item;
    return next;
  }
  if ((filters.status && item.status !== filters.status) || (filters.agentId && item.agentId !== filters.agentId)) return list as OperationSummary[];
  let at = list.findIndex((known) => newerFirst(item, known) < 0);
  if (at < 0) {
    if (morePages) return list as OperationSummary[];
    at = list.length;
  }
  return [...list.slice(0, at), item, ...list.slice(at)];
}

/** A page read from the API merged into what is loaded: each row's newer copy, in list order. */
export function mergeHead(loaded: readonly OperationSummary[], page: readonly OperationSummary[]): OperationSummary[] {
  const rows = new Map(loaded.map((item) => [item.operationId, item]));
  for (const item of page) {
    const known = rows.get(item.operationId);
    if (!known || !isStaler(item, known)) rows.set(item.operationId, item);
  }
  return [...rows.values()].sort(newerFirst);
}
