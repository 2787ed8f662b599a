/**
 * Our tools are `identifier/apiName`; Chat Completions function names must match `^[a-zA-Z0-9_-]{1,64}$`.
 * The encoding is a pure function of the pair, so the history of earlier steps encodes the same way in any
 * process. Plain pairs become `identifier__apiName`; anything else (dots, long names, an identifier with
 * `__` or a trailing `_`) gets a sanitized name with a hash suffix and no `__`, decoded through the request's
 * tool list.
 */
import { createHash } from 'node:crypto';

export interface ToolPair {
  identifier: string;
  apiName: string;
}

const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const SEPARATOR = '__';
/** An identifier splits back unambiguously at the first `__` only if it has none and no trailing `_`. */
const PLAIN_IDENTIFIER = /^[a-zA-Z0-9-]+(?:_[a-zA-Z0-9-]+)*$/;
const PLAIN_API_NAME = /^[a-zA-Z0-9_-]+$/;
const HASH_LENGTH = 10;

export function encodeToolName({ identifier, apiName }: ToolPair): string {
  const plain = `${identifier}${SEPARATOR}${apiName}`;
  if (PLAIN_IDENTIFIER.test(identifier) && PLAIN_API_NAME.test(apiName) && plain.length <= 64) return plain;
  const hash = createHash('sha256').update(`${identifier}/${apiName}`).digest('hex').slice(0, HASH_LENGTH);
  // No `__` in a hashed name, so it can never be misread as the plain form.
  const readable = `${identifier}_${apiName}`.replace(/[^a-zA-Z0-9_-]/g, '_').replace(/_+/g, '_').slice(0, 64 - HASH_LENGTH - 1);
  return `${readable}-${hash}`;
}

export function isValidFunctionName(name: string): boolean {
  return FUNCTION_NAME.test(name);
}

/** Maps function names back to tools: the request's tools first, then the plain `a__b` form. */
export class ToolNameTable {
  private readonly byName = new Map<string, ToolPair>();

  constructor(tools: readonly ToolPair[]) {
    for (const { identifier, apiName } of tools) this.byName.set(encodeToolName({ identifier, apiName }), { identifier, apiName });
  }

  /**
   * A name the model invented (no such tool in the request) still decodes deterministically, so the
   * runtime can answer "unknown tool" with an error result the model sees.
   */
  decode(name: string): ToolPair {
    const known = this.byName.get(name);
    if (known) return { ...known };
    const at = name.indexOf(SEPARATOR);
    if (at > 0) return { identifier: name.slice(0, at), apiName: name.slice(at + SEPARATOR.length) };
    return { identifier: '', apiName: name };
  }
}
