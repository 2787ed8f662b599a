/**
 * The `nextCursor` of `GET /v1/operations` and `runtime.list()` (the same cursor in both): opaque to
 * callers, base64url of `[createdAt, id]` — the last item's place in the list order. It carries no owner:
 * every page is filtered by the owner asked for, so a cursor from another owner (or an edited one) only
 * moves within the asked owner's operations. Decoding is strict: anything this package would not have
 * issued is `undefined` (HTTP 400, `InvalidListQueryError` in the library), never a query.
 */
import type { OperationListPosition } from '../operation-read.port.js';
import { hasControlCharacter } from '../../common/control-characters.js';

/** `Date#toISOString()`, the 6-digit-year form included. */
const ISO_TIMESTAMP = /^(?:\d{4}|[+-]\d{6})-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** Operation ids are stored in 36-character columns. */
const ID_MAX = 36;
/** Far above any cursor issued (two short strings), far below anything costly to decode. */
const CURSOR_MAX = 256;

export function encodeCursor(position: OperationListPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id]), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): OperationListPosition | undefined {
  if (cursor.length > CURSOR_MAX || !BASE64URL.test(cursor)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) return undefined;
  const [createdAt, id] = parsed as unknown[];
  if (typeof createdAt !== 'string' || !ISO_TIMESTAMP.test(createdAt)) return undefined;
  if (typeof id !== 'string' || id.length === 0 || id.length > ID_MAX || hasControlCharacter(id)) return undefined;
  const position = { createdAt, id };
  // Only the exact encoding `encodeCursor` issues (no padding, no alternate spellings of the same bytes).
  return encodeCursor(position) === cursor ? position : undefined;
}
