import { compileToolPattern } from '../../../src/runtime/tools/tool-pattern.js';

function matches(pattern: string, name: string): boolean {
  const compiled = compileToolPattern(pattern);
  if (compiled.kind !== 'glob') throw new Error('expected a glob');
  return compiled.matches(name);
}

describe('tools: patterns (DESIGN §8 tools globs)', () => {
  it('clock/* matches every tool of clock and nothing else', () => {
    expect(matches('clock/*', 'clock/now')).toBe(true);
    expect(matches('clock/*', 'clock/today')).toBe(true);
    expect(matches('clock/*', 'clockwork/now')).toBe(false);
    expect(matches('clock/*', 'fs/readFile')).toBe(false);
  });

  it('an exact name matches only itself; dots are literal', () => {
    expect(matches('clock/now', 'clock/now')).toBe(true);
    expect(matches('clock/now', 'clock/nowish')).toBe(false);
    expect(matches('fs.v2/read', 'fs.v2/read')).toBe(true);
    expect(matches('fs.v2/read', 'fsXv2/read')).toBe(false);
  });

  it('* and ** match every tool; * inside a half does not cross the slash', () => {
    expect(matches('*', 'clock/now')).toBe(true);
    expect(matches('**', 'kb/search')).toBe(true);
    expect(matches('*/now', 'clock/now')).toBe(true);
    expect(matches('*/now', 'clock/later')).toBe(false);
    expect(matches('c*', 'clock/now')).toBe(false);
    expect(matches('fs/read?', 'fs/readX')).toBe(true);
    expect(matches('fs/read?', 'fs/read')).toBe(false);
  });

  it('regex characters in a glob are literal, never a regex', () => {
    expect(matches('fs/(read|write)', 'fs/read')).toBe(false);
    expect(matches('fs/(read|write)', 'fs/(read|write)')).toBe(true);
  });

  it('mcp:<server> names a server; mayMatchIdentifier says which servers a glob needs', () => {
    expect(compileToolPattern('mcp:kb')).toEqual({ kind: 'mcp', serverId: 'kb', source: 'mcp:kb' });
    const glob = compileToolPattern('kb/*');
    if (glob.kind !== 'glob') throw new Error('expected a glob');
    expect(glob.mayMatchIdentifier('kb')).toBe(true);
    expect(glob.mayMatchIdentifier('docs')).toBe(false);
    const all = compileToolPattern('*');
    expect(all.kind === 'glob' && all.mayMatchIdentifier('docs')).toBe(true);
  });
});
