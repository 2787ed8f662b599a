/**
 * Tool matchers (W5) on a linear-time engine: user patterns cannot hang the dispatcher (`^(a+)+$`).
 */
import { RE2JS } from 're2js';
import { HookConfigurationError } from './hook-errors.js';
import { MAX_PATTERN_PROGRAM_SIZE } from './input-limits.js';
import { patternLimitProblem } from './pattern-budget.js';

export interface ToolMatcher {
  readonly source: string;
  test(toolName: string): boolean;
}

/** Compiles a matcher; omitted, empty or `*` match every tool (returns `undefined`). Unanchored. */
export function compileMatcher(pattern: string | undefined, where: string): ToolMatcher | undefined {
  if (pattern === undefined || pattern === '' || pattern === '*') return undefined;
  if (typeof pattern !== 'string') throw new HookConfigurationError(`${where}: matcher must be a string`);
  // G6: length and compiled-size limits from the text, before re2js pays for a huge program.
  const limit = patternLimitProblem(pattern);
  if ('problem' in limit) throw new HookConfigurationError(`${where}: matcher: ${limit.problem}`);
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (error) {
    throw new HookConfigurationError(`${where}: matcher: invalid regular expression${reasonOf(error)}`);
  }
  // The estimate errs high; the real size is the backstop should it ever err low.
  if (compiled.programSize() > MAX_PATTERN_PROGRAM_SIZE) {
    throw new HookConfigurationError(`${where}: matcher: compiles to too large a program (over ${MAX_PATTERN_PROGRAM_SIZE} instructions)`);
  }
  return { source: pattern, test: (toolName: string) => compiled.test(toolName) };
}

/** re2js's `error` field is the reason alone; its message would quote the pattern. */
function reasonOf(error: unknown): string {
  const reason = (error as { error?: unknown } | null)?.error;
  return typeof reason === 'string' ? ` (${reason})` : '';
}

export function toolNameOf(identifier: string, apiName: string): string {
  return `${identifier}/${apiName}`;
}
