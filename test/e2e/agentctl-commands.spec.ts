/**
 * DESIGN §9 / issue 7: `agentctl serve | worker | run | generate | validate | purge`, run as the real CLI
 * from dist/: `--help` for each, exit codes 0 ok / 1 failure / 2 bad usage or config, clear errors for bad
 * flags and missing files; `run` prints the answer and the timeline table; `purge` removes old completed
 * operations with every child row.
 */
import { StoreDatabase } from '../../src/persistence/store-database.js';
import { jest } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openAgentHooksDataSource } from '../../src/persistence/open-data-source.js';
import { NO_ROWS, rowsOf, seedOperation } from '../integration/ops/retention-seed.js';
import { ensureBuilt } from './support/server-process.js';

// Each test spawns the built CLI or server (a few seconds each on a busy 2-core machine).
jest.setTimeout(120_000);

interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string | undefined> = {}): CliResult {
  const result = spawnSync(process.execPath, ['dist/cli/agentctl.js', ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const DAY = 86_400_000;
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentctl-commands-'));
  ensureBuilt();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('DESIGN §9 every command has --help (exit 0)', () => {
  it.each([
    ['serve', ['--port <port>', '--database <url>', '--mode <mode>', '--purge-older-than <age>', '--purge-every <age>']],
    ['worker', ['--database <url>', '--redis <url>', '--concurrency <n>', '--queue-prefix <name>']],
    ['run', ['<agentId>', '<prompt>', '--config <file>', '--database <url>']],
    ['generate', ['--force']],
    ['validate', ['--plugins <file>']],
    ['purge', ['--older-than <age>', '--database <url>']],
  ])('%s --help', (command, options) => {
    const result = cli([command, '--help']);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`Usage: agentctl ${command}`);
    for (const option of options) expect(result.stdout).toContain(option);
  });

  it('agentctl --help lists the six commands', () => {
    const result = cli(['--help']);
    expect(result.status).toBe(0);
    for (const command of ['serve', 'worker', 'run', 'validate', 'generate', 'purge']) expect(result.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
  });
});

describe('DESIGN §9 bad usage exits 2 with a clear message', () => {
  it.each([
    [['no-such-command'], "unknown command 'no-such-command'"],
    [['serve', '--bogus'], "unknown option '--bogus'"],
    [['serve', '--port', 'abc'], "option '--port <port>' argument 'abc' is invalid. must be an integer from 0 to 65535"],
    [['serve', '--mode', 'turbo'], "must be 'local' or 'queue'"],
    [['serve', '--purge-older-than', 'soon'], '"soon" is not an age: use a positive whole number and a unit s, m, h, d or w'],
    [['serve', '--purge-every', '1h'], '--purge-every needs --purge-older-than'],
    [['purge'], "required option '--older-than <age>' not specified"],
    [['purge', '--older-than', '30x'], '"30x" is not an age'],
    [['purge', '--older-than', '0d'], '"0d" is not an age'],
    [['run', 'assistant'], "missing required argument 'prompt'"],
    [['worker', '--concurrency', '0'], 'must be a positive whole number'],
  ])('%j', (args, message) => {
    const result = cli(args);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(message);
  });
});

describe('DESIGN §9 missing files and bad config exit 2, naming the file', () => {
  it.each([
    [['serve', '--port', '0', '--config', 'nope/agents.yaml']],
    [['run', 'assistant', 'hi', '--config', 'nope/agents.yaml']],
    [['worker', '--config', 'nope/agents.yaml', '--database', 'postgres://127.0.0.1/none']],
    [['validate', '--config', 'nope/agents.yaml']],
  ])('%j → cannot read the config file', (args) => {
    const result = cli(args);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('nope/agents.yaml: cannot read the config file (ENOENT)');
    // One line, not a framework stack trace.
    expect(result.stderr).not.toContain('    at ');
  });

  it('purge on a SQLite file that does not exist exits 2 and creates nothing', () => {
    const missing = join(dir, 'missing.sqlite');
    const result = cli(['purge', '--older-than', '30d', '--database', `sqlite:${missing}`]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(`agentctl: no database file at ${missing}`);
    expect(cli(['purge', '--older-than', '30d', '--database', `sqlite:${missing}`]).stderr).toContain('no database file');
  });

  it('an unknown agent exits 2', () => {
    const result = cli(['run', 'nobody', 'hi', '--database', `sqlite:${join(dir, 'run.sqlite')}`]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('agentctl: unknown agent "nobody"');
  });

  it('a bad --database URL exits 2 without echoing it', () => {
    const result = cli(['purge', '--older-than', '30d', '--database', 'mysql://user:pw-4417@db/x']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("database must be 'sqlite:PATH'");
    expect(result.stderr).not.toContain('pw-4417');
  });
});

describe('DESIGN §4/§9 queue mode needs PostgreSQL and Redis (serve --mode queue, worker)', () => {
  it('worker without a database exits 2 saying it needs the shared PostgreSQL database', () => {
    const result = cli(['worker'], { DATABASE_URL: undefined });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('agentctl worker needs --database postgres://');
  });

  it.each([
    [['worker', '--database', 'sqlite:./x.sqlite']],
    [['serve', '--mode', 'queue', '--port', '0', '--database', 'sqlite:./x.sqlite']],
  ])('%j on SQLite exits 2', (args) => {
    const result = cli(args);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('queue mode needs the shared PostgreSQL database');
  });

  it('a Redis URL that is not redis:// exits 2', () => {
    const result = cli(['worker', '--database', 'postgres://127.0.0.1/x', '--redis', 'http://127.0.0.1:6379']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('redis: unsupported protocol http:');
  });
});

describe('agentctl run prints the answer and a readable timeline table', () => {
  it('assistant: the answer, the summary, and the table (point, hook, source, outcome, ms) with the policy allow and the audit', () => {
    const result = cli(['run', 'assistant', 'What time is it?', '--database', `sqlite:${join(dir, 'run.sqlite')}`]);
    expect(result.status).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(/^It is \d{4}-\d{2}-\d{2}T\S+\.$/);
    expect(result.stdout).toMatch(/operation [0-9a-f-]{36}: done, \d+ tokens, \$0\.0000/);
    expect(result.stdout).toMatch(/^#\s+point\s+hook\s+source\s+outcome\s+ms$/m);
    expect(result.stdout).toMatch(/^1\s+beforeToolCall\s+quickstart_hooks\.clockPolicy\s+config\s+allowed\s+\d+\.\d$/m);
    expect(result.stdout).toMatch(/^2\s+after_tool_call\s+quickstart_hooks\.auditToolCall\s+config\s+ok\s+\d+\.\d$/m);
    // The audit hook's log line is info: not on stdout, which is the answer.
    expect(result.stdout).not.toContain('tool=clock/now');
  });

  it('timekeeper: the quickstart policy denies clock/set; the denial is the answer and the timeline shows it', () => {
    const result = cli(['run', 'timekeeper', 'noon', '--database', `sqlite:${join(dir, 'run.sqlite')}`]);
    expect(result.status).toBe(0);
    expect(result.stdout.split('\n')[0]).toBe('Changing the clock (clock/set) is not allowed.');
    expect(result.stdout).toMatch(/^1\s+beforeToolCall\s+quickstart_hooks\.clockPolicy\s+config\s+denied\s+\d+\.\d$/m);
    // Denied before it ran: no after_tool_call (DESIGN §3).
    expect(result.stdout).not.toContain('after_tool_call');
  });
});

describe('agentctl purge --older-than (retention)', () => {
  it('removes completed operations older than the age with all child rows; newer, running and waiting ones stay; exit 0', async () => {
    const database = `sqlite:${join(dir, 'purge.sqlite')}`;
    const now = Date.now();
    const dataSource = await openAgentHooksDataSource(database);
    const handle = new StoreDatabase(dataSource);
    let ids: Record<string, string>;
    try {
      ids = {
        old: await seedOperation(handle, { createdAt: new Date(now - 90 * DAY), completedAt: new Date(now - 60 * DAY) }),
        older: await seedOperation(handle, { createdAt: new Date(now - 400 * DAY), completedAt: new Date(now - 399 * DAY) }),
        recent: await seedOperation(handle, { createdAt: new Date(now - 40 * DAY), completedAt: new Date(now - 29 * DAY) }),
        oldRunning: await seedOperation(handle, { createdAt: new Date(now - 90 * DAY) }),
        oldWaiting: await seedOperation(handle, { createdAt: new Date(now - 90 * DAY), waiting: true }),
      };
    } finally {
      await dataSource.destroy();
    }

    const result = cli(['purge', '--older-than', '30d', '--database', database]);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(
      /^purged 2 completed operations finished before \S+Z \(4 messages, 2 timeline rows, 2 caller hooks, 2 interventions, 2 placeholders\)\n$/,
    );

    const after = await openAgentHooksDataSource(database);
    const afterHandle = new StoreDatabase(after);
    try {
      expect(await rowsOf(afterHandle, ids.old!)).toEqual(NO_ROWS);
      expect(await rowsOf(afterHandle, ids.older!)).toEqual(NO_ROWS);
      for (const kept of [ids.recent!, ids.oldRunning!, ids.oldWaiting!]) {
        expect(await rowsOf(afterHandle, kept)).toMatchObject({ messages: 2, callerHooks: 1, timeline: 1, intervention: true, placeholders: 1 });
      }
      expect((await rowsOf(afterHandle, ids.oldRunning!)).operation?.status).toBe('running');
      expect((await rowsOf(afterHandle, ids.oldWaiting!)).operation?.status).toBe('waiting');
    } finally {
      await after.destroy();
    }

    // Nothing left to purge: still exit 0.
    expect(cli(['purge', '--older-than', '30d', '--database', database]).stdout).toMatch(/^purged 0 completed operations/);
  });
});
