/**
 * An agent's `tools:` entry (DESIGN §8): a glob over `identifier/apiName` (`clock/*`, `clock/now`, `*`) or
 * `mcp:<server>` for every tool of an MCP server. In a glob `*` matches within one half of the name and
 * `?` one character; `*` alone (or `**`) matches every tool. Everything else is literal.
 */
export type ToolPattern =
  | { readonly kind: 'mcp'; readonly serverId: string; readonly source: string }
  | {
      readonly kind: 'glob';
      readonly source: string;
      /** Whether `identifier/apiName` matches. */
      matches(toolName: string): boolean;
      /** Whether some tool of this identifier could match (which MCP servers must be asked). */
      mayMatchIdentifier(identifier: string): boolean;
    };

const MCP_PREFIX = 'mcp:';

export function compileToolPattern(pattern: string): ToolPattern {
  if (pattern.startsWith(MCP_PREFIX)) return { kind: 'mcp', serverId: pattern.slice(MCP_PREFIX.length), source: pattern };
  if (pattern === '*' || pattern === '**') {
    return { kind: 'glob', source: pattern, matches: () => true, mayMatchIdentifier: () => true };
  }
  const slash = pattern.indexOf('/');
  const full = globToRegExp(pattern);
  const identifier = globToRegExp(slash === -1 ? pattern : pattern.slice(0, slash));
  return {
    kind: 'glob',
    source: pattern,
    matches: (toolName) => full.test(toolName),
    mayMatchIdentifier: (id) => identifier.test(id),
  };
}

function globToRegExp(glob: string): RegExp {
  let source = '';
  for (const char of glob) {
    if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}
