/**
 * Issue 17 item 3 (the list "updates live"): where a change from GET /v1/events goes in the loaded list —
 * a known row is updated in place (and stays even if it no longer matches the status filter), a new one
 * that matches the filters goes where the list order puts it, one older than all loaded rows waits for
 * "Load more" while more pages remain — and a re-read page merged in: the newer copy of each row wins
 * whichever arrives last, and the list keeps its order.
 */
import { mergeHead, placeChange } from '../../../console/src/list/live-list.js';
import type { OperationSummary } from '../../../console/src/api/types.js';

const op = (operationId: string, createdAt: string, status: OperationSummary['status'] = 'running', agentId = 'a'): OperationSummary => ({
  operationId,
  agentId,
  status,
  createdAt,
  updatedAt: createdAt,
  steps: 0,
  usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
});
const ids = (list: readonly OperationSummary[]) => list.map((item) => item.operationId);
const ANY = { status: '', agentId: '' };
const loaded = [op('c', '2026-12-01T10:00:03Z'), op('b', '2026-12-01T10:00:02Z'), op('a', '2026-12-01T10:00:01Z')];

describe('issue 17 item 3: a live change placed into the list', () => {
  it('a known operation is replaced where it is', () => {
    const next = placeChange(loaded, op('b', '2026-12-01T10:00:02Z', 'completed'), ANY, false);
    expect(ids(next)).toEqual(['c', 'b', 'a']);
    expect(next[1]!.status).toBe('completed');
  });

  it('a new operation goes in list order: newest first, the id breaking a tie', () => {
    expect(ids(placeChange(loaded, op('d', '2026-12-01T10:00:04Z'), ANY, false))).toEqual(['d', 'c', 'b', 'a']);
    expect(ids(placeChange(loaded, op('bb', '2026-12-01T10:00:02Z'), ANY, false))).toEqual(['c', 'bb', 'b', 'a']);
    expect(ids(placeChange(loaded, op('old', '2026-12-01T09:00:00Z'), ANY, false))).toEqual(['c', 'b', 'a', 'old']);
  });

  it('one older than every loaded row waits for "Load more" while more pages remain', () => {
    expect(ids(placeChange(loaded, op('old', '2026-12-01T09:00:00Z'), ANY, true))).toEqual(['c', 'b', 'a']);
  });

  it('a new operation outside the filters is left out; a known one that leaves the status filter stays, updated', () => {
    expect(ids(placeChange(loaded, op('d', '2026-12-01T10:00:04Z', 'completed'), { status: 'running', agentId: '' }, false))).toEqual(['c', 'b', 'a']);
    expect(ids(placeChange(loaded, op('d', '2026-12-01T10:00:04Z', 'running', 'other'), { status: '', agentId: 'a' }, false))).toEqual(['c', 'b', 'a']);
    const next = placeChange(loaded, op('c', '2026-12-01T10:00:03Z', 'completed'), { status: 'running', agentId: '' }, false);
    expect(next[0]!.status).toBe('completed');
  });
});

describe('issue 17 item 3: a re-read page merged into the live list', () => {
  const at = (id: string, status: OperationSummary['status'], updatedAt: string, steps = 0): OperationSummary => ({ ...op(id, '2026-12-01T10:00:02Z', status), updatedAt, steps });

  it('a page read before a change the stream already placed does not bring the old state back', () => {
    const completed = at('x', 'completed', '2026-12-01T10:00:09Z', 2);
    const readEarlier = at('x', 'running', '2026-12-01T10:00:05Z', 1);
    expect(mergeHead([completed], [readEarlier])).toEqual([completed]);
    // …and the stream's late copy of an older state does not undo a newer read either.
    expect(placeChange([completed], readEarlier, ANY, false)).toEqual([completed]);
  });

  it('a newer copy from the page replaces the loaded one; rows the stream placed stay; the order is kept', () => {
    const streamed = op('new', '2026-12-01T10:00:09Z');
    const page = [at('b', 'completed', '2026-12-01T10:00:08Z', 2), op('a', '2026-12-01T10:00:01Z')];
    const merged = mergeHead([streamed, ...loaded], page);
    expect(ids(merged)).toEqual(['new', 'c', 'b', 'a']);
    expect(merged[2]!.status).toBe('completed');
  });
});
