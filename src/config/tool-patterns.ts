/**
 * Validation of an agent's `tools:` entries (DESIGN §8). Matching lives in one place, the runtime's
 * compiler (runtime/tools/tool-pattern.ts); this file only says which entries the config accepts: a glob
 * over `identifier/apiName` with both halves (a bare `clock` could never match, so it is an error, not a
 * silent no-op), `*` or `**` alone, or `mcp:<server>`.
 */
import { MCP_PATTERN_PREFIX } from '../runtime/tools/tool-pattern.js';

export { MCP_PATTERN_PREFIX };

const GLOB = /^[^/\s]+\/[^/\s]+$/;
const EVERY_TOOL = new Set(['*', '**']);
const SERVER_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** Why `pattern` is not a valid tools entry, or `undefined` when it is. Never quotes the pattern. */
export function toolPatternProblem(pattern: string): string | undefined {
  if (pattern.startsWith(MCP_PATTERN_PREFIX)) {
    return SERVER_ID.test(pattern.slice(MCP_PATTERN_PREFIX.length)) ? undefined : '"mcp:" must be followed by an MCP server id';
  }
  return GLOB.test(pattern) || EVERY_TOOL.has(pattern) ? undefined : 'must be a glob over "identifier/apiName" (e.g. "clock/*"), "*" or "mcp:<server>"';
}
