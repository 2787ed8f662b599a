/**
 * `agentctl validate` and `agentctl generate` (SPEC E4, E5, DESIGN §8–§9), run as the real CLI from dist/.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt } from './support/server-process.js';

interface CliResult {
  status: number;
  stdout: string;
  stderr: string;
}

function runCli(args: string[]): CliResult {
  try {
    const stdout = execFileSync(process.execPath, ['dist/cli/agentctl.js', ...args], { encoding: 'utf8', stdio: 'pipe' });
    return { status: 0, stdout, stderr: '' };
  } catch (error) {
    const e = error as { status: number; stdout: string; stderr: string };
    return { status: e.status, stdout: e.stdout, stderr: e.stderr };
  }
}

const SECRET = 'hunter2-literal-secret-7781';

const BASE_CONFIG = `system: t
models:
  default: { provider: scripted, costPerTokenUsd: 0, script: [ { content: "hi" } ] }
agents:
  assistant: { model: default, instructions: "x", tools: [] }
`;

let dir: string;

/** A project folder: agents.yaml, and plugins/ with the given files (paths relative to the folder). */
function project(config: string, files: Record<string, string> = {}): string {
  const root = mkdtempSync(join(dir, 'project-'));
  writeFileSync(join(root, 'agents.yaml'), config);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentctl-config-'));
  // Under the shared build lock: another test file may be building dist/ at the same time.
    ensureBuilt();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('agentctl validate', () => {
  it("E4/E5: the repository's config validates: prints ok, exits 0", () => {
    const result = runCli(['validate']);
    expect(result).toEqual({ status: 0, stdout: 'ok\n', stderr: '' });
  });

  it('X: the enterprise example validates (its plugin is imported and instantiated, no hook runs, so no key is needed)', () => {
    const result = runCli(['validate', '--config', 'examples/enterprise-knowledge-assistant/agents.yaml']);
    expect(result).toEqual({ status: 0, stdout: 'ok\n', stderr: '' });
  });

  it('E4/E5: lists every problem (missing method, missing plugin id, secret literal) with file:line key, exits 2, never prints the secret', () => {
    const root = project(
      `${BASE_CONFIG}metadata: { apiToken: "${SECRET}" }
hooks:
  after_tool_call:
    - { plugin: audit_hooks, method: missingMethod, failure_policy: warn }
  on_run_start:
    - { plugin: ghost_hooks, method: start }
`,
      {
        'plugins/plugins.toml': '[hooks.plugins]\naudit_hooks = "plugins/hooks/audit-hooks:AuditHooks"\n',
        'plugins/hooks/audit-hooks.ts': 'export class AuditHooks {\n  audit(): void {}\n}\n',
      },
    );
    const config = join(root, 'agents.yaml');
    const result = runCli(['validate', '--config', config]);
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`^${escape(config)}:6 metadata\\.apiToken: literal secret`)),
      `${config}:9 hooks.after_tool_call[0].method: not a method of the plugin (its methods: audit)`,
      expect.stringMatching(new RegExp(`^${escape(config)}:11 hooks\\.on_run_start\\[0\\]\\.plugin: unknown plugin id`)),
    ]);
    expect(result.stderr).not.toContain(SECRET);
    expect(result.stderr).not.toContain('hunter2');
  });

  it('E4: a hook method that throws is never called by validate (it only checks the method exists)', () => {
    const root = project(`${BASE_CONFIG}hooks:\n  on_engine_start:\n    - { plugin: loud, method: start }\n`, {
      'plugins/plugins.toml': '[hooks.plugins]\nloud = "plugins/hooks/loud:Loud"\n',
      'plugins/hooks/loud.mjs': "export class Loud {\n  start() {\n    throw new Error('called');\n  }\n}\n",
    });
    expect(runCli(['validate', '--config', join(root, 'agents.yaml')])).toEqual({ status: 0, stdout: 'ok\n', stderr: '' });
  });

  it('E5: --plugins names the manifest; a missing file is reported, exit 2', () => {
    const root = project(BASE_CONFIG);
    const result = runCli(['validate', '--config', join(root, 'agents.yaml'), '--plugins', join(root, 'nope.toml')]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(`${join(root, 'nope.toml')}: cannot read the plugins file (ENOENT)`);
  });

  it('has --help', () => {
    const result = runCli(['validate', '--help']);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('Usage: agentctl validate');
    expect(result.stdout).toContain('--plugins <file>');
  });
});

describe('agentctl generate', () => {
  const USES = `${BASE_CONFIG}hooks:
  after_tool_call:
    - { plugin: research_hooks, method: audit, failure_policy: warn }
    - { plugin: audit-log, method: audit, failure_policy: warn }
  on_run_start:
    - { plugin: research_hooks, method: start }
`;

  it('E5: creates plugins/plugins.toml with one sorted entry per plugin id (kebab module, Pascal class), no duplicates', () => {
    const root = project(USES);
    const result = runCli(['generate', '--config', join(root, 'agents.yaml')]);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('created');
    const text = readFileSync(join(root, 'plugins', 'plugins.toml'), 'utf8');
    const entries = text.split('\n').filter((line) => line.includes(' = '));
    expect(entries).toEqual(['audit-log = "plugins/hooks/audit-log:AuditLog"', 'research_hooks = "plugins/hooks/research-hooks:ResearchHooks"']);
    expect(text).toContain('[hooks.plugins]\n');
  });

  it('E5: merging keeps hand-edited entries, comments and other lines; adds only the new ids', () => {
    const handEdited = `# our plugins — keep this comment
[hooks.plugins]
# research lives elsewhere
research_hooks = "plugins/custom/research:Research"   # hand-picked
`;
    const root = project(USES, { 'plugins/plugins.toml': handEdited });
    const result = runCli(['generate', '--config', join(root, 'agents.yaml')]);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('added: audit-log');
    expect(readFileSync(join(root, 'plugins', 'plugins.toml'), 'utf8')).toBe(`${handEdited}audit-log = "plugins/hooks/audit-log:AuditLog"\n`);
  });

  it('E5: --force rewrites existing entries of used ids to the default, keeping comments and unused ids', () => {
    const handEdited = `# keep me
[hooks.plugins]
research_hooks = "plugins/custom/research:Research"   # hand-picked
unused = "plugins/hooks/unused:Unused"
`;
    const root = project(USES, { 'plugins/plugins.toml': handEdited });
    const result = runCli(['generate', '--config', join(root, 'agents.yaml'), '--force']);
    expect(result.status).toBe(0);
    expect(readFileSync(join(root, 'plugins', 'plugins.toml'), 'utf8')).toBe(`# keep me
[hooks.plugins]
research_hooks = "plugins/hooks/research-hooks:ResearchHooks"   # hand-picked
unused = "plugins/hooks/unused:Unused"
audit-log = "plugins/hooks/audit-log:AuditLog"
`);
  });

  it('E5: deterministic: a second run gives identical bytes (and says it is up to date)', () => {
    const root = project(USES);
    const file = join(root, 'plugins', 'plugins.toml');
    expect(runCli(['generate', '--config', join(root, 'agents.yaml')]).status).toBe(0);
    const first = readFileSync(file);
    const again = runCli(['generate', '--config', join(root, 'agents.yaml')]);
    expect(again.status).toBe(0);
    expect(again.stdout).toContain('up to date');
    expect(readFileSync(file).equals(first)).toBe(true);
    // A fresh project with the same config produces the same bytes.
    const other = project(USES);
    runCli(['generate', '--config', join(other, 'agents.yaml')]);
    expect(readFileSync(join(other, 'plugins', 'plugins.toml')).equals(first)).toBe(true);
  });

  it('E5: appends a [hooks.plugins] table when the file has none, keeping what is there', () => {
    const root = project(USES, { 'plugins/plugins.toml': '# nothing yet\n' });
    expect(runCli(['generate', '--config', join(root, 'agents.yaml')]).status).toBe(0);
    expect(readFileSync(join(root, 'plugins', 'plugins.toml'), 'utf8')).toBe(
      '# nothing yet\n\n[hooks.plugins]\naudit-log = "plugins/hooks/audit-log:AuditLog"\nresearch_hooks = "plugins/hooks/research-hooks:ResearchHooks"\n',
    );
  });

  it('E4: an invalid hooks section is reported (exit 2) and nothing is written', () => {
    const root = project(`${BASE_CONFIG}hooks:\n  on_nothing:\n    - { plugin: a, method: b }\n`);
    const result = runCli(['generate', '--config', join(root, 'agents.yaml')]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(`${join(root, 'agents.yaml')}:7 hooks.on_nothing: unknown hook point`);
    expect(() => readFileSync(join(root, 'plugins', 'plugins.toml'))).toThrow();
  });

  it('has --help', () => {
    const result = runCli(['generate', '--help']);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('--force');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
