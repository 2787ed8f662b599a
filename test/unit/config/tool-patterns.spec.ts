/** DESIGN §8: which agent `tools:` entries the config accepts (matching: test/unit/tools/tool-pattern.spec.ts). */
import { toolPatternProblem } from '../../../src/config/tool-patterns.js';

describe('tools: entry validation', () => {
  it.each(['clock/*', 'clock/now', 'c?ock/n*', '*/*', '*', '**', 'mcp:kb', 'mcp:kb-2_x'])('accepts %j', (pattern) => {
    expect(toolPatternProblem(pattern)).toBeUndefined();
  });

  it.each(['clock', '***', 'a/b/c', '/now', 'clock/', 'fs/read file', ''])('rejects %j as not identifier/apiName', (pattern) => {
    expect(toolPatternProblem(pattern)).toMatch(/identifier\/apiName/);
  });

  it.each(['mcp:', 'mcp:-kb', 'mcp:k/b'])('rejects %j as not naming an MCP server', (pattern) => {
    expect(toolPatternProblem(pattern)).toMatch(/MCP server id/);
  });

  it('never quotes the entry it rejects', () => {
    expect(toolPatternProblem('sk-SECRET-ish')).not.toContain('sk-SECRET-ish');
  });
});
