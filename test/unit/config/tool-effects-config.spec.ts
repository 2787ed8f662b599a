/**
 * SPEC F3 in agents.yaml: `timeoutMs`, `idempotent` and `retry` on MCP servers and per-tool overrides,
 * `timeoutMs` on agents. A retry that would reach a tool not declared idempotent, a negative, fractional
 * or absurd deadline, an out-of-range attempt count: configuration errors naming file, line and key.
 */
import { AgentsConfigError, type ConfigIssue } from '../../../src/config/config-error.js';
import { parseAgentsConfig } from '../../../src/config/agents-config.loader.js';

const FILE = 'config/agents.yaml';

const yaml = (server: string, agent = '') => `system: f3
mcpServers:
  kb: ${server}
models:
  m: { provider: scripted, script: [ { content: "ok" } ] }
agents:
  a: { model: m, tools: [ "mcp:kb" ]${agent} }
`;

function issuesOf(text: string): readonly ConfigIssue[] {
  try {
    parseAgentsConfig(text, FILE);
  } catch (error) {
    expect(error).toBeInstanceOf(AgentsConfigError);
    return (error as AgentsConfigError).issues;
  }
  throw new Error('the config was accepted');
}

describe('F3 tool effects in agents.yaml', () => {
  it('F3: accepts timeoutMs, idempotent and retry on a server, per-tool overrides, and an agent timeoutMs', () => {
    const config = parseAgentsConfig(
      yaml('{ url: "http://127.0.0.1:1/mcp", timeoutMs: 5000, idempotent: true, retry: { attempts: 3, initialDelayMs: 100, maxDelayMs: 2000 }, tools: { lookup: { timeoutMs: 200 }, pay: { retry: { attempts: 1 } } } }', ', timeoutMs: 90000'),
      FILE,
    );
    expect(config.mcpServers.kb).toMatchObject({ timeoutMs: 5000, idempotent: true, retry: { attempts: 3 }, tools: { lookup: { timeoutMs: 200 } } });
    expect(config.agents.a!.timeoutMs).toBe(90000);
  });

  it.each([
    ['on a server not declared idempotent', '{ url: "http://127.0.0.1:1/mcp", retry: { attempts: 3 } }', 'mcpServers.kb.retry'],
    ['on a per-tool override of a non-idempotent server', '{ url: "http://127.0.0.1:1/mcp", tools: { lookup: { retry: { attempts: 3 } } } }', 'mcpServers.kb.tools.lookup.retry'],
    ['on a tool that overrides idempotent to false', '{ url: "http://127.0.0.1:1/mcp", idempotent: true, tools: { pay: { idempotent: false, retry: { attempts: 2 } } } }', 'mcpServers.kb.tools.pay.retry'],
    ["inherited from the server by a non-idempotent tool", '{ url: "http://127.0.0.1:1/mcp", idempotent: true, retry: { attempts: 2 }, tools: { pay: { idempotent: false } } }', 'mcpServers.kb.tools.pay.idempotent'],
  ])('F3: retry %s is a configuration error naming file, line and key', (_what, server, path) => {
    const issues = issuesOf(yaml(server));
    expect(issues).toEqual([expect.objectContaining({ file: FILE, line: 3, path, message: expect.stringMatching(/idempotent/) })]);
  });

  it.each([
    ['negative', '-5'],
    ['zero', '0'],
    ['fractional', '1.5'],
    ['absurd', '1000000000000'],
    ['not a number', '"soon"'],
  ])('F3: a %s timeoutMs is a configuration error on a server, a per-tool override and an agent', (_what, value) => {
    expect(issuesOf(yaml(`{ url: "http://127.0.0.1:1/mcp", timeoutMs: ${value} }`))).toEqual([expect.objectContaining({ line: 3, path: 'mcpServers.kb.timeoutMs' })]);
    expect(issuesOf(yaml(`{ url: "http://127.0.0.1:1/mcp", tools: { lookup: { timeoutMs: ${value} } } }`))).toEqual([
      expect.objectContaining({ line: 3, path: 'mcpServers.kb.tools.lookup.timeoutMs' }),
    ]);
    expect(issuesOf(yaml('{ url: "http://127.0.0.1:1/mcp" }', `, timeoutMs: ${value}`))).toEqual([expect.objectContaining({ line: 7, path: 'agents.a.timeoutMs' })]);
  });

  it.each([['0'], ['11'], ['2.5']])('F3: retry.attempts %s is out of range', (attempts) => {
    expect(issuesOf(yaml(`{ url: "http://127.0.0.1:1/mcp", idempotent: true, retry: { attempts: ${attempts} } }`))).toEqual([
      expect.objectContaining({ line: 3, path: 'mcpServers.kb.retry.attempts' }),
    ]);
  });

  it('F3: an unknown key in a retry or a tool override is reported at the key', () => {
    expect(issuesOf(yaml('{ url: "http://127.0.0.1:1/mcp", idempotent: true, retry: { attempts: 2, jitter: none } }'))).toEqual([
      expect.objectContaining({ path: 'mcpServers.kb.retry.jitter', message: 'unknown key' }),
    ]);
  });
});
