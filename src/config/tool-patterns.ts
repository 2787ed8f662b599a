/**
 * Validation of an agent's `tools:` entries (DESIGN §8). Matching lives in one place, the runtime's
 * compiler (runtime/tools/tool-pattern.ts); this file only says which entries the config accepts: a glob
 * over `identifier/apiName` with both halves (a bare `clock` could never match, so it is an error, not a
 * silent no-op), `*` or `**` alone, or `mcp:<server>`.
 */
import { MAX_PATTERN_LENGTH } from '../hooks/input-limits.js';
import { PatternBudget } from '../hooks/pattern-budget.js';
import { globRegexSource, MCP_PATTERN_PREFIX } from '../runtime/tools/tool-pattern.js';

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

/**
 * Why `perTool` keys (SPEC F4) are refused, each naming its entry (1-based), never the pattern: a tools
 * entry's form, and G6's limits — at most 1,024 characters, a compiled-size budget per pattern and one for
 * the agent's `perTool` together (a glob is charged as the expression it compiles to).
 */
export function perToolPatternProblems(patterns: readonly string[]): string[] {
  const budget = new PatternBudget();
  const problems: string[] = [];
  for (const [index, pattern] of patterns.entries()) {
    const entry = `entry ${index + 1}`;
    if (pattern.length > MAX_PATTERN_LENGTH) {
      problems.push(`${entry}: the pattern must be at most ${MAX_PATTERN_LENGTH} characters`);
      continue;
    }
    const form = toolPatternProblem(pattern);
    if (form !== undefined) {
      problems.push(`${entry}: the pattern ${form}`);
      continue;
    }
    if (pattern.startsWith(MCP_PATTERN_PREFIX)) continue;
    const charged = budget.charge(globRegexSource(pattern));
    if (charged !== undefined) {
      problems.push(`${entry}: the pattern ${charged}`);
      return problems; // the budget is spent: every later entry would say the same
    }
  }
  return problems;
}
