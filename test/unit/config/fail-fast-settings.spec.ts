/**
 * SPEC G7, the validators on their own: one per setting, each naming the variable and never the value;
 * which `tools:` entries can select something.
 */
import { moduleSettingProblems } from '../../../src/config/environment/module-settings.js';
import { toolEntryProblems, type KnownTools } from '../../../src/config/tool-entry-selection.js';
import { formatIssue, formatKeyPath } from '../../../src/config/config-error.js';

const WHSEC = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;

describe('G7 settings read from the environment', () => {
  it('unset or empty settings are the defaults, never an error', () => {
    expect(moduleSettingProblems({}, {})).toEqual([]);
    expect(moduleSettingProblems({}, { AGENT_HOOKS_WEBHOOK_SECRET: '', QSTASH_URL: '', AGENT_HOOKS_WEBHOOK_ALLOW_NETWORKS: '' })).toEqual([]);
  });

  it('well-formed values pass', () => {
    const env = {
      AGENT_HOOKS_WEBHOOK_SECRET: WHSEC,
      AGENT_HOOKS_WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8, fd00::/8',
      AGENT_HOOKS_APP_URL: 'https://app.example/base',
      QSTASH_URL: 'http://127.0.0.1:8080',
      QSTASH_TOKEN: 'eyJVc2VySUQiOiJ4In0=',
    };
    expect(moduleSettingProblems({ redis: 'redis://127.0.0.1:6379/2' }, env)).toEqual([]);
  });

  it.each([
    ['AGENT_HOOKS_WEBHOOK_SECRET', 'whsec_not base64 g7'],
    ['AGENT_HOOKS_WEBHOOK_SECRET', 'whsec_'],
    ['AGENT_HOOKS_WEBHOOK_ALLOW_NETWORKS', '10.0.0.0/8,g7/40'],
    ['AGENT_HOOKS_APP_URL', 'https://user:g7@app.example'],
    ['QSTASH_URL', 'g7.example'],
    ['QSTASH_TOKEN', 'g7\ntoken'],
  ])('G7: a malformed %s is a problem naming the variable, never the value', (variable, value) => {
    const problems = moduleSettingProblems({}, { [variable]: value });
    expect(problems).toEqual([{ variable, problem: expect.any(String) }]);
    expect(JSON.stringify(problems)).not.toContain('g7');
  });

  it('a module option replaces its variable: the option is checked, the variable is not', () => {
    const env = { AGENT_HOOKS_WEBHOOK_SECRET: 'g7 bad', AGENT_HOOKS_WEBHOOK_ALLOW_NETWORKS: 'g7 bad', AGENT_HOOKS_APP_URL: 'g7 bad' };
    expect(moduleSettingProblems({ webhooks: { signingSecret: WHSEC, allowNetworks: [], appUrl: 'http://127.0.0.1:3000' } }, env)).toEqual([]);
    expect(moduleSettingProblems({ webhooks: { signingSecret: 'g7', allowNetworks: ['g7'], appUrl: 'g7' }, redis: 'http://g7:1' }, {}).map((p) => p.variable)).toEqual([
      'webhooks.signingSecret',
      'webhooks.allowNetworks',
      'webhooks.appUrl',
      'redis',
    ]);
  });
});

describe('G7 tools entries that select nothing', () => {
  const known: KnownTools = { names: ['clock/now', 'clock/set', 'browser/open'], mcpServers: ['kb'] };
  const problemsOf = (tools: string[], with_: KnownTools = known) => toolEntryProblems({ a: { tools } }, with_).map(({ path }) => path.join('.'));

  it('G7: a tools entry that selects nothing is a problem at agents.<id>.tools[<n>]', () => {
    expect(problemsOf(['clock/now', 'clock/nwo', 'clok/*', 'kb/*', 'k?/search', 'browser/*', 'agents/call', 'agents/*', 'mcp:kb', 'c*/s?t'])).toEqual([
      'agents.a.tools.1',
      'agents.a.tools.2',
    ]);
  });

  it('"*" and "**" are fine as long as anything exists; they never count agents/call', () => {
    expect(problemsOf(['*', '**'])).toEqual([]);
    expect(problemsOf(['*', '**'], { names: [], mcpServers: ['kb'] })).toEqual([]);
    expect(problemsOf(['*', '**', 'agents/call'], { names: [], mcpServers: [] })).toEqual(['agents.a.tools.0', 'agents.a.tools.1']);
  });

  it('only an entry that names agents/ selects the built-in sub-agent tool', () => {
    expect(problemsOf(['*/call', 'agents/call', 'agents/*'], { names: [], mcpServers: [] })).toEqual(['agents.a.tools.0']);
  });

  it('G7: the problem names the entry itself (a typo is found by reading it), never one shaped like key material or too long to be a name', () => {
    const long = `clock/${'x'.repeat(100)}`;
    const problems = toolEntryProblems({ a: { tools: ['clock/nwo', 'sk-live/abc', long, 'clok/*'] } }, known);
    expect(problems.map(({ entry }) => entry)).toEqual(['clock/nwo', undefined, undefined, 'clok/*']);
    const issue = formatIssue({ file: 'agents.yaml', line: 7, path: formatKeyPath(problems[0]!.path), entry: problems[0]!.entry!, message: problems[0]!.message });
    expect(issue).toBe('agents.yaml:7 agents.a.tools[0] "clock/nwo": selects no tool: no local tool, declared client tool or configured MCP server matches it');
  });
});
