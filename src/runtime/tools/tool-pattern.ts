/**
 * An agent's `tools:` entry (DESIGN §8): a glob over `identifier/apiName` (`clock/*`, `clock/now`, `*`) or
 * `mcp:<server>` for every tool of an MCP server. In a glob `*` matches within one half of the name and
 * `?` one character; `*` alone (or `**`) matches every tool. Everything else is literal. The one tool
 * matcher: the config loader only validates entries (config/tool-patterns.ts). Globs compile to the
 * linear-time engine, so a pattern with many `*` cannot make matching a long (MCP) tool name slow.
 */
import { RE2JS } from 're2js';

export type ToolPattern =
  | { readonly kind: 'mcp'; readonly serverId: string; readonly source: string }
  | {
      readonly kind: 'glob';
      readonly source: string;
      /** Whether `identifier/apiName` matches (whole-string). */
      matches(toolName: string): boolean;
      /** Whether some tool of this identifier could match (which MCP servers must be asked). */
      mayMatchIdentifier(identifier: string): boolean;
    };

export const MCP_PATTERN_PREFIX = 'mcp:';

export function compileToolPattern(pattern: string): ToolPattern {
  if (pattern.startsWith(MCP_PATTERN_PREFIX)) return { kind: 'mcp', serverId: pattern.slice(MCP_PATTERN_PREFIX.length), source: pattern };
  if (pattern === '*' || pattern === '**') {
    return { kind: 'glob', source: pattern, matches: () => true, mayMatchIdentifier: () => true };
  }
  const slash = pattern.indexOf('/');
  const full = globToRegExp(pattern);
  const identifier = globToRegExp(slash === -1 ? pattern : pattern.slice(0, slash));
  return {
    kind: 'glob',
    source: pattern,
    matches: (toolName) => full.matches(toolName),
    mayMatchIdentifier: (id) => identifier.matches(id),
  };
}

/** `matches` on the result is a whole-string match: `clock/*` does not match `myclock/now`. */
function globToRegExp(glob: string): RE2JS {
  return RE2JS.compile(globRegexSource(glob));
}

/** The regular expression a glob compiles to (what G6's size budget charges for a `perTool` key). */
export function globRegexSource(glob: string): string {
  let source = '';
  for (const char of glob) {
    if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += RE2JS.quote(char);
  }
  return source;
}
