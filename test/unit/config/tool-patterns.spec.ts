/** DESIGN §8: agent `tools:` entries, globs over `identifier/apiName` and `mcp:<server>`. */
import { compileToolPattern, matchesToolPattern, toolFilter, toolPatternProblem } from '../../../src/config/tool-patterns.js';

const clockNow = { identifier: 'clock', apiName: 'now' };
const kbSearch = { identifier: 'kb', apiName: 'search', serverId: 'kb' };

describe('tool globs', () => {
  it('`clock/*` matches every clock tool and nothing else', () => {
    expect(matchesToolPattern('clock/*', clockNow)).toBe(true);
    expect(matchesToolPattern('clock/*', { identifier: 'clock', apiName: '' })).toBe(true);
    expect(matchesToolPattern('clock/*', { identifier: 'myclock', apiName: 'now' })).toBe(false);
    expect(matchesToolPattern('clock/*', { identifier: 'clocks', apiName: 'now' })).toBe(false);
    expect(matchesToolPattern('clock/*', { identifier: 'fs', apiName: 'clock' })).toBe(false);
  });

  it('an exact name matches only itself (whole-string match)', () => {
    expect(matchesToolPattern('clock/now', clockNow)).toBe(true);
    expect(matchesToolPattern('clock/now', { identifier: 'clock', apiName: 'nowish' })).toBe(false);
    expect(matchesToolPattern('clock/no', clockNow)).toBe(false);
  });

  it('`*` and `?` never cross the `/`; `*/*` matches every tool', () => {
    expect(matchesToolPattern('*/*', clockNow)).toBe(true);
    expect(matchesToolPattern('*/*', kbSearch)).toBe(true);
    expect(matchesToolPattern('c*/n?w', clockNow)).toBe(true);
    expect(matchesToolPattern('c?ock/*', clockNow)).toBe(true);
    expect(matchesToolPattern('*/now', { identifier: 'a/b', apiName: 'now' })).toBe(false);
  });

  it('regex characters in a glob are literal', () => {
    expect(matchesToolPattern('fs/read.file', { identifier: 'fs', apiName: 'read.file' })).toBe(true);
    expect(matchesToolPattern('fs/read.file', { identifier: 'fs', apiName: 'readXfile' })).toBe(false);
    expect(matchesToolPattern('f(s)/a+', { identifier: 'f(s)', apiName: 'a+' })).toBe(true);
    expect(matchesToolPattern('f(s)/a+', { identifier: 'fs', apiName: 'aa' })).toBe(false);
  });

  it('`*` or `**` alone matches every tool, local or MCP, whatever its name', () => {
    for (const all of ['*', '**']) {
      expect(matchesToolPattern(all, clockNow)).toBe(true);
      expect(matchesToolPattern(all, kbSearch)).toBe(true);
      expect(matchesToolPattern(all, { identifier: 'a/b', apiName: 'x\ny' })).toBe(true);
    }
  });

  it('a glob also matches MCP tools by their identifier/apiName', () => {
    expect(matchesToolPattern('kb/search', kbSearch)).toBe(true);
  });
});

describe('mcp:<server>', () => {
  it('matches every tool of that server, and only MCP tools of it', () => {
    expect(matchesToolPattern('mcp:kb', kbSearch)).toBe(true);
    expect(matchesToolPattern('mcp:kb', { identifier: 'kb', apiName: 'other', serverId: 'kb' })).toBe(true);
    expect(matchesToolPattern('mcp:kb', { identifier: 'wiki', apiName: 'search', serverId: 'wiki' })).toBe(false);
    // A local tool that happens to use the server's id as identifier is not an MCP tool.
    expect(matchesToolPattern('mcp:kb', { identifier: 'kb', apiName: 'search' })).toBe(false);
  });

  it('compiles to its server id', () => {
    expect(compileToolPattern('mcp:kb')).toEqual({ kind: 'mcp', source: 'mcp:kb', serverId: 'kb' });
  });
});

describe('validation and the filter', () => {
  it('names what is wrong and rejects invalid entries', () => {
    expect(toolPatternProblem('clock/*')).toBeUndefined();
    expect(toolPatternProblem('mcp:kb')).toBeUndefined();
    expect(toolPatternProblem('*')).toBeUndefined();
    expect(toolPatternProblem('clock')).toMatch(/identifier\/apiName/);
    expect(toolPatternProblem('***')).toMatch(/identifier\/apiName/);
    expect(toolPatternProblem('mcp:')).toMatch(/MCP server id/);
    expect(() => compileToolPattern('clock')).toThrow(TypeError);
    expect(() => matchesToolPattern('a/b/c', clockNow)).toThrow(TypeError);
  });

  it('toolFilter allows a tool when any entry matches', () => {
    const allowed = toolFilter(['clock/now', 'mcp:kb']);
    expect(allowed(clockNow)).toBe(true);
    expect(allowed(kbSearch)).toBe(true);
    expect(allowed({ identifier: 'clock', apiName: 'set' })).toBe(false);
    expect(toolFilter([])(clockNow)).toBe(false);
  });
});
