/**
 * The query of `GET /v1/operations` (DESIGN §7): `status`, `agentId`, `limit`, `cursor`, each at most once.
 * A bad value is a 400 naming the parameter (G6), never echoing it; other parameters are ignored, as a
 * browser may add its own (a cache buster). An empty value is a bad value: omit a filter to not filter.
 */
import { z } from 'zod';
import { MAX_IDENTIFIER_LENGTH } from '../../hooks/input-limits.js';
import type { OperationListPosition } from '../../runtime/operation-read.port.js';
import type { OperationStatus } from '../../runtime/runtime-store.port.js';
import { hasControlCharacter } from '../../common/control-characters.js';
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, LIST_STATUSES } from '../../runtime/reading/list-options.js';
import { decodeCursor } from '../../runtime/reading/operation-cursor.js';
import { parseRequest } from './request-validation.js';

export { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, LIST_STATUSES };

const single = { error: 'must be given once, as a string' };

const limitField = z
  .string(single)
  .regex(/^\d{1,3}$/, { error: `must be an integer from 1 to ${LIST_LIMIT_MAX}` })
  .transform(Number)
  .refine((limit) => limit >= 1 && limit <= LIST_LIMIT_MAX, { error: `must be an integer from 1 to ${LIST_LIMIT_MAX}` });

const cursorField = z
  .string(single)
  .transform((cursor, ctx): OperationListPosition => {
    const position = decodeCursor(cursor);
    if (position) return position;
    ctx.addIssue({ code: 'custom', message: 'is not a cursor this server issued (use nextCursor as given)' });
    return z.NEVER;
  });

const listQuery = z.object({
  status: z.enum(LIST_STATUSES, { error: (issue) => (typeof issue.input === 'string' ? `must be one of ${LIST_STATUSES.join(', ')}` : single.error) }).optional(),
  agentId: z
    .string(single)
    .min(1, { error: 'must not be empty' })
    .max(MAX_IDENTIFIER_LENGTH, { error: `must be at most ${MAX_IDENTIFIER_LENGTH} characters` })
    .refine((agentId) => !hasControlCharacter(agentId), { error: 'must not contain control characters' })
    .optional(),
  limit: limitField.optional(),
  cursor: cursorField.optional(),
});

export interface ListQuery {
  status?: OperationStatus;
  agentId?: string;
  limit: number;
  after?: OperationListPosition;
}

/** The parsed query, or a 400 listing every bad parameter (`limit: must be an integer from 1 to 200`). */
export function parseListQuery(query: unknown): ListQuery {
  const { status, agentId, limit, cursor } = parseRequest(listQuery, query ?? {}, 'query');
  return {
    ...(status !== undefined ? { status } : {}),
    ...(agentId !== undefined ? { agentId } : {}),
    limit: limit ?? LIST_LIMIT_DEFAULT,
    ...(cursor !== undefined ? { after: cursor } : {}),
  };
}
