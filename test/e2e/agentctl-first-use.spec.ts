/**
 * Issue 15 item 4 through real child processes on the build: `agentctl --version`, the `--plugins` help,
 * `agentctl run` printing why an operation failed, and the one config-file rule of the module and the CLI.
 */
import { jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ensureBuilt } from './support/server-process.js';

// Each test starts one or two Node processes that boot Nest.
jest.setTimeout(60_000);

const ROOT = resolve('.');
const AGENTCTL = join(ROOT, 'dist/cli/agentctl.js');

interface Result {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Asynchronous, so a server in this process can answer the child. */
function node(args: string[], options: { cwd?: string; env?: Record<string, string | undefined> } = {}): Promise<Result> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { cwd: options.cwd ?? ROOT, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', fail);
    child.on('close', (status) => {
      clearTimeout(timer);
      done({ status, stdout, stderr });
    });
  });
}

let dir: string;
beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'agent-hooks-first-use-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('agentctl for a new user', () => {
  it('--version prints the version of package.json', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const result = await node([AGENTCTL, '--version']);
    expect(result).toMatchObject({ status: 0, stdout: `${version}\n` });
  });

  it.each(['serve', 'run', 'worker', 'validate'])('%s --help says where the plugins file is looked for: beside the config, else in its parent folder', async (command) => {
    const result = await node([AGENTCTL, command, '--help']);
    expect(result.stdout.replace(/\s+/g, ' ')).toContain('plugins/plugins.toml in the folder of the config file, else in its parent folder');
  });

  describe('a model that answers 401', () => {
    let server: Server;
    let url: string;
    beforeAll(async () => {
      server = createServer((_req, res) => res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"message":"PROVIDER-BODY-DISTINCTIVE"}}'));
      await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    });
    afterAll(() => new Promise((closed) => server.close(closed)));

    it('agentctl run prints error: type and summary (model id, status, the unset variable) and logs it', async () => {
      const config = join(dir, 'remote.yaml');
      writeFileSync(config, 'system: s\nmodels:\n  m: { provider: openai, model: remote-model, baseUrlEnv: FIRST_USE_URL, apiKeyEnv: FIRST_USE_KEY }\nagents:\n  remote: { model: m }\n');
      const result = await node([AGENTCTL, 'run', 'remote', 'USER-PROMPT-DISTINCTIVE', '--config', config, '--database', `sqlite:${join(dir, 'remote.sqlite')}`], {
        env: { FIRST_USE_URL: url, FIRST_USE_KEY: undefined },
      });
      const summary = 'ModelError: model remote-model answered HTTP 401 (FIRST_USE_KEY is not set)';
      expect(result.status).toBe(1);
      expect(result.stdout).toContain(`error: ${summary}`);
      expect(result.stderr).toContain(summary);
      expect(result.stdout + result.stderr).not.toContain('DISTINCTIVE');
    });
  });

  describe('one config-file rule: config/agents.yaml of the working folder when it exists', () => {
    beforeAll(() => {
      mkdirSync(join(dir, 'app', 'config'), { recursive: true });
      writeFileSync(join(dir, 'app', 'config', 'agents.yaml'), 'system: s\nmodels:\n  m: { provider: scripted, script: [ { content: "hello from the default config" } ] }\nagents:\n  greeter: { model: m }\n');
    });

    it('AgentHooksModule.forRoot() without configFile loads it', async () => {
      const script = join(dir, 'boot.mjs');
      writeFileSync(
        script,
        [
          `import { createRequire } from 'node:module';`,
          `import { pathToFileURL } from 'node:url';`,
          `const require = createRequire(${JSON.stringify(join(ROOT, 'package.json'))});`,
          `await import(pathToFileURL(require.resolve('reflect-metadata')).href);`,
          `const { NestFactory } = await import(pathToFileURL(require.resolve('@nestjs/core')).href);`,
          `const { AgentHooksModule, AgentRuntime } = await import(${JSON.stringify(pathToUrl(join(ROOT, 'dist/index.js')))});`,
          `const app = await NestFactory.createApplicationContext(AgentHooksModule.forRoot({ database: 'sqlite::memory:' }), { logger: false });`,
          `const result = await app.get(AgentRuntime).run('hi', { agentId: 'greeter' });`,
          `process.stdout.write(result.content);`,
          `await app.close();`,
        ].join('\n'),
      );
      const result = await node([script], { cwd: join(dir, 'app') });
      expect(result).toMatchObject({ status: 0, stdout: 'hello from the default config' });
    });

    it('agentctl run without --config loads it too; without the file it runs with no agents', async () => {
      const database = `sqlite:${join(dir, 'default.sqlite')}`;
      const found = await node([AGENTCTL, 'run', 'greeter', 'hi', '--database', database], { cwd: join(dir, 'app') });
      expect(found.status).toBe(0);
      expect(found.stdout).toContain('hello from the default config');
      const none = await node([AGENTCTL, 'run', 'greeter', 'hi', '--database', database], { cwd: dir });
      expect(none.status).not.toBe(0);
      expect(none.stderr).toContain('unknown agent "greeter"');
    });
  });
});

function pathToUrl(path: string): string {
  return new URL(`file://${path}`).href;
}
