/**
 * Tool matchers (W5) on a linear-time engine: user patterns cannot hang the dispatcher (`^(a+)+$`).
 */
import { RE2JS } from 're2js';
import { HookConfigurationError } from './hook-errors.js';

export interface ToolMatcher {
  readonly source: string;
  test(toolName: string): boolean;
}

/** Compiles a matcher; omitted, empty or `*` match every tool (returns `undefined`). Unanchored. */
export function compileMatcher(pattern: string | undefined, where: string): ToolMatcher | undefined {
  if (pattern === undefined || pattern === '' || pattern === '*') return undefined;
  if (typeof pattern !== 'string') throw new HookConfigurationError(`${where}: matcher must be a string`);
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new HookConfigurationError(`${where}: invalid matcher ${JSON.stringify(pattern)}: ${why}`);
  }
  return { source: pattern, test: (toolName: string) => compiled.test(toolName) };
}

export function toolNameOf(identifier: string, apiName: string): string {
  return `${identifier}/${apiName}`;
}
