/**
 * The `tools:` entries of an agent (DESIGN §8): a glob over `identifier/apiName` (`clock/*`, `fs/read?`)
 * or `mcp:<server>` for every tool of a configured MCP server. In a glob, `*` is any run of characters and
 * `?` one character, neither crossing the `/` between identifier and apiName; everything else is literal.
 * `*` (or `**`) alone matches every tool, as in the tool catalog (runtime/tools/tool-pattern.ts); any other
 * glob must have both halves, so a bare `clock` (which could never match) is an error, not a silent no-op.
 * Globs compile to the linear-time engine, so no pattern can make matching slow.
 */
import { RE2JS } from 're2js';

export const MCP_PATTERN_PREFIX = 'mcp:';

/** What a pattern is matched against; `serverId` is set for MCP tools only. */
export interface ToolRef {
  identifier: string;
  apiName: string;
  serverId?: string;
}

export type ToolPattern =
  | { readonly kind: 'glob'; readonly source: string; readonly glob: RE2JS }
  | { readonly kind: 'mcp'; readonly source: string; readonly serverId: string };

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

/** Throws `TypeError` on an invalid pattern (the config loader reports those with their line first). */
export function compileToolPattern(pattern: string): ToolPattern {
  const problem = toolPatternProblem(pattern);
  if (problem !== undefined) throw new TypeError(`invalid tools entry: ${problem}`);
  if (pattern.startsWith(MCP_PATTERN_PREFIX)) return { kind: 'mcp', source: pattern, serverId: pattern.slice(MCP_PATTERN_PREFIX.length) };
  if (EVERY_TOOL.has(pattern)) return { kind: 'glob', source: pattern, glob: RE2JS.compile('.*', RE2JS.DOTALL) };
  let regex = '';
  for (const char of pattern) {
    if (char === '*') regex += '[^/]*';
    else if (char === '?') regex += '[^/]';
    else regex += RE2JS.quote(char);
  }
  return { kind: 'glob', source: pattern, glob: RE2JS.compile(regex) };
}

export function matchesToolPattern(pattern: string | ToolPattern, tool: ToolRef): boolean {
  const compiled = typeof pattern === 'string' ? compileToolPattern(pattern) : pattern;
  if (compiled.kind === 'mcp') return tool.serverId === compiled.serverId;
  // `matches` is a whole-string match: `clock/*` does not match `myclock/now`.
  return compiled.glob.matches(`${tool.identifier}/${tool.apiName}`);
}

/** One predicate for an agent's whole `tools:` list: a tool is allowed when any entry matches it. */
export function toolFilter(patterns: readonly string[]): (tool: ToolRef) => boolean {
  const compiled = patterns.map(compileToolPattern);
  return (tool) => compiled.some((pattern) => matchesToolPattern(pattern, tool));
}
