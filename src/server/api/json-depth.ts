/**
 * G6: a request body nests at most 64 levels. Checked right after parsing (V8's `JSON.parse` is iterative)
 * and before anything recursive — validation, freezing, `JSON.stringify` on the way to the database —
 * walks the value; this walk keeps its own stack, so no depth can overflow it.
 */
import { MAX_JSON_DEPTH } from '../../hooks/input-limits.js';
import { fieldPath } from './request-validation.js';

/** The field named in a refusal: the path down to its second object key (`context.metadata`, `hooks[0].webhook`). */
const NAMED_KEYS = 2;
/** A key outside this shape ends the named path, so a refusal never quotes an odd or long key. */
const PLAIN_KEY = /^[A-Za-z_$][\w$-]{0,63}$/;

interface Pending {
  value: object;
  depth: number;
  path: PropertyKey[];
  /** Object keys in `path`; once it reaches NAMED_KEYS (or an odd key) the path stops growing. */
  named: number;
  frozen: boolean;
}

function child(parent: Pending, key: PropertyKey, value: object): Pending {
  const isKey = typeof key === 'string';
  // An index names a field only below a key (`hooks[0]`); a bare top-level array is just `body`.
  const grows = !parent.frozen && (isKey ? PLAIN_KEY.test(key) : parent.named > 0);
  const named = parent.named + (isKey ? 1 : 0);
  return {
    value,
    depth: parent.depth + 1,
    path: grows ? [...parent.path, key] : parent.path,
    named,
    frozen: parent.frozen || !grows || named >= NAMED_KEYS,
  };
}

/** The field (or `body`) holding a container nested deeper than `maxDepth`; `undefined` when within it. */
export function tooDeepField(body: unknown, maxDepth = MAX_JSON_DEPTH): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const stack: Pending[] = [{ value: body, depth: 1, path: [], named: 0, frozen: false }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (item.depth > maxDepth) return fieldPath(item.path) || 'body';
    const entries: [PropertyKey, unknown][] = Array.isArray(item.value)
      ? item.value.map((value, index) => [index, value])
      : Object.entries(item.value);
    for (const [key, value] of entries) {
      if (value !== null && typeof value === 'object') stack.push(child(item, key, value));
    }
  }
  return undefined;
}
