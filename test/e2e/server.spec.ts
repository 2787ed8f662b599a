import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { AgentRuntime } from '../../src/runtime/agent-runtime.js';
import { bootstrapServer } from '../../src/server/bootstrap-server.js';
import { ensureBuilt } from './support/server-process.js';

// Nest colours its log lines; strip the escape codes before matching.
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

function waitForListening(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8').replace(ANSI, '');
      const match = /listening on (http:\/\/[^\s]+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`agentctl exited with ${code} before listening:\n${output}`)));
  });
}

function runCli(args: string[]): { status: number; output: string } {
  try {
    const output = execFileSync(process.execPath, ['dist/cli/agentctl.js', ...args], { encoding: 'utf8', stdio: 'pipe' });
    return { status: 0, output };
  } catch (error) {
    const e = error as { status: number; stdout: string; stderr: string };
    return { status: e.status, output: `${e.stdout}${e.stderr}` };
  }
}

let dir: string;

describe('standalone server', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'agent-hooks-server-'));
    // `npm test` builds first; this keeps a lone `jest` run working too.
    // Under the shared build lock: another test file may be building dist/ at the same time.
    ensureBuilt();
  });

  it('answers /healthz once the module has booted (in process)', async () => {
    const app: INestApplication = await bootstrapServer({ host: '127.0.0.1', port: 0, configFile: 'config/agents.yaml', database: `sqlite:${join(dir, 'in-process.sqlite')}` });
    try {
      const { port } = app.getHttpServer().address() as { port: number };
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status: 'ok' });
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
      // The offline quickstart runs end to end through the server's runtime: scripted model + clock/now.
      const result = await app.get(AgentRuntime).run('What time is it?', { agentId: 'assistant' });
      expect(result.content).toMatch(/^It is \d{4}-\d{2}-\d{2}T/);
    } finally {
      await app.close();
    }
  });

  it('agentctl serve --port 0 prints one "listening on" line, serves /healthz and stops cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, ['dist/cli/agentctl.js', 'serve', '--port', '0', '--database', `sqlite:${join(dir, 'cli.sqlite')}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await waitForListening(child);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const response = await fetch(`${url}/healthz`);
      expect(response.status).toBe(200);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    // Spawning the built server takes a few seconds on a busy 2-core machine.
  }, 60_000);

  it('agentctl run prints the answer and the operation summary; an unknown agent exits 2', () => {
    const ok = runCli(['run', 'assistant', 'What time is it?', '--database', `sqlite:${join(dir, 'run.sqlite')}`]);
    expect(ok.status).toBe(0);
    expect(ok.output).toMatch(/^It is \d{4}-\d{2}-\d{2}T[^\n]*\.\n/);
    expect(ok.output).toMatch(/operation [0-9a-f-]{36}: done/);
    // The quickstart's config hook (agents.yaml → plugins.toml → plugins/hooks/quickstart-hooks.ts) is in the timeline.
    expect(ok.output).toMatch(/after_tool_call\s+quickstart_hooks\.auditToolCall\s+config\s+ok/);
    const unknown = runCli(['run', 'nobody', 'hi', '--database', `sqlite:${join(dir, 'run.sqlite')}`]);
    expect(unknown.status).toBe(2);
    expect(unknown.output).toContain('unknown agent "nobody"');
  });

  it('agentctl exits 2 on bad usage and 0 on --help', () => {
    expect(runCli(['--help']).status).toBe(0);
    const badPort = runCli(['serve', '--port', 'abc']);
    expect(badPort.status).toBe(2);
    expect(badPort.output).toContain('--port');
    expect(runCli(['no-such-command']).status).toBe(2);
  });
});
