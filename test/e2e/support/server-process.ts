/**
 * Runs the BUILT standalone server (`node dist/cli/agentctl.js serve --port 0 …`) as a child process for
 * black-box tests: they reach it over HTTP only, as a client would.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Nest colours its log lines; strip the escape codes before matching.
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

/** Variables of the server's auth and hook settings: a test's server gets only those it sets. */
const SERVER_VARIABLES = /^(AGENT_HOOKS_|AGENT_HOOK_WEBHOOK_)/;

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** Everything the server printed so far (stdout and stderr, colours stripped). */
  output(): string;
  /** `Date.now()` when the "listening on" line was seen (recovery times are measured from it). */
  listeningAt: number;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL (a crash: no shutdown of any kind), resolves once the process is gone. */
  kill(): Promise<void>;
}

export interface ServerOptions {
  config: string;
  database: string;
  plugins?: string;
  env?: Record<string, string>;
  args?: string[];
}

/**
 * Builds dist/ when sources are newer (`npm test` builds first; this keeps a lone `jest` run working).
 * Test files run in parallel: a lock directory keeps two of them from running tsc over the same dist/.
 */
export function ensureBuilt(): void {
  const lock = join(tmpdir(), `nest-agent-hooks-build-${Buffer.from(process.cwd()).toString('hex').slice(-40)}.lock`);
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Another file is building. A lock older than any build is left over from a killed run.
      const since = statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? 0;
      if (Date.now() - since > 300_000 || Date.now() > deadline) rmSync(lock, { recursive: true, force: true });
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    execFileSync(process.execPath, ['scripts/build-if-needed.mjs'], { stdio: 'pipe' });
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export function startServer(options: ServerOptions): Promise<ServerProcess> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !SERVER_VARIABLES.test(name)) env[name] = value;
  Object.assign(env, options.env ?? {});
  const args = ['dist/cli/agentctl.js', 'serve', '--port', '0', '--database', options.database, '--config', options.config];
  if (options.plugins) args.push('--plugins', options.plugins);
  args.push(...(options.args ?? []));
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8').replace(ANSI, '');
      const match = /listening on (http:\/\/[^\s]+)/.exec(output);
      if (match) {
        child.stdout!.off('data', onData);
        child.stderr!.off('data', onData);
        child.stdout!.on('data', (more: Buffer) => (output += more.toString('utf8').replace(ANSI, '')));
        child.stderr!.on('data', (more: Buffer) => (output += more.toString('utf8').replace(ANSI, '')));
        resolve({
          url: match[1]!,
          child,
          listeningAt: Date.now(),
          output: () => output,
          stop: async () => {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
            const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
            const code = await exited;
            clearTimeout(timer);
            return code;
          },
          kill: async () => {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
            await exited;
          },
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => reject(new Error(`agentctl serve exited with ${code} before listening:\n${output}`)));
  });
}
