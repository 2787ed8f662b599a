/**
 * Where a change from GET /v1/events goes in the loaded list: a known operation is replaced in place; a
 * new one that matches the filters is put where the list order (createdAt, then id, newest first) puts it
 * — unless it is older than everything loaded while more pages remain (it will come with "Load more").
 * A known row that stops matching the status filter stays, updated: rows do not vanish under the reader.
 */
import type { OperationSummary } from '../api/types.js';

export type LiveState = 'connecting' | 'live' | 'unavailable';

export interface LiveFilters {
  status: string;
  agentId: string;
}

const newerFirst = (a: OperationSummary, b: OperationSummary): number =>
  a.createdAt === b.createdAt ? (a.operationId < b.operationId ? 1 : a.operationId > b.operationId ? -1 : 0) : a.createdAt < b.createdAt ? 1 : -1;

export function placeChange(list: readonly OperationSummary[], item: OperationSummary, filters: LiveFilters, morePages: boolean): OperationSummary[] {
  const index = list.findIndex((known) => known.operationId === item.operationId);
  if (index >= 0) {
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
