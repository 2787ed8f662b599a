/**
 * `runtime.list()`'s options, checked as `GET /v1/operations` checks its query (SPEC G6): a bad one is an
 * `InvalidListQueryError` naming the option, never echoing it. A cursor is only a place in the list order:
 * the owner filter applies to every page, so a cursor (another owner's, an edited one) never reaches
 * another owner's rows.
 */
import { hasControlCharacter } from '../../common/control-characters.js';
import { MAX_IDENTIFIER_LENGTH } from '../../hooks/input-limits.js';
import type { OperationListPosition } from '../operation-read.port.js';
import type { OperationStatus } from '../runtime-store.port.js';
import { InvalidListQueryError } from '../runtime-errors.js';
import { decodeCursor } from './operation-cursor.js';
import type { OperationListOptions } from './read-api.types.js';

export const LIST_LIMIT_DEFAULT = 50;
export const LIST_LIMIT_MAX = 200;
export const LIST_STATUSES = ['running', 'waiting', 'completed'] as const satisfies readonly OperationStatus[];

/** A list read, checked: what `OperationReadService.page` takes. */
export interface ListPageQuery {
  ownerId?: string;
  status?: OperationStatus;
  agentId?: string;
  limit: number;
  after?: OperationListPosition;
}

function identifier(field: 'ownerId' | 'agentId', value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw new InvalidListQueryError(field, 'must be a non-empty string');
  if (value.length > MAX_IDENTIFIER_LENGTH) throw new InvalidListQueryError(field, `must be at most ${MAX_IDENTIFIER_LENGTH} characters`);
  if (hasControlCharacter(value)) throw new InvalidListQueryError(field, 'must not contain control characters');
  return value;
}

export function parseListOptions(options: OperationListOptions = {}): ListPageQuery {
  const { ownerId, status, agentId, limit, cursor } = options;
  if (status !== undefined && !(LIST_STATUSES as readonly unknown[]).includes(status)) {
    throw new InvalidListQueryError('status', `must be one of ${LIST_STATUSES.join(', ')}`);
  }
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMIT_MAX)) {
    throw new InvalidListQueryError('limit', `must be an integer from 1 to ${LIST_LIMIT_MAX}`);
  }
  let after: OperationListPosition | undefined;
  if (cursor !== undefined) {
    after = typeof cursor === 'string' ? decodeCursor(cursor) : undefined;
    if (!after) throw new InvalidListQueryError('cursor', 'is not a cursor this runtime issued (use nextCursor as given)');
  }
  return {
    ...(ownerId !== undefined ? { ownerId: identifier('ownerId', ownerId) } : {}),
    ...(status !== undefined ? { status } : {}),
    ...(agentId !== undefined ? { agentId: identifier('agentId', agentId) } : {}),
    limit: limit ?? LIST_LIMIT_DEFAULT,
    ...(after ? { after } : {}),
  };
}
