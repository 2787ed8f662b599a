/**
 * examples/host-app as a user runs it: the packed tarball installed into a copy of the example (from the
 * npm cache), compiled with its own tsc, migrated by its own pipeline (`npm run migrate`) into a fresh
 * PostgreSQL schema, and started as a child process (`node dist/main.js`) on a loopback port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { DataSource } from 'typeorm';
import { DATABASE_URL, uniqueSchemaName } from '../../integration/persistence/test-databases.js';
import { hostEnv, INSTALL_FLAGS, npm, packThisPackage } from './host-npm.js';
import { ensureBuilt } from './server-process.js';

const EXAMPLE = resolve('examples/host-app');

export interface HostApp {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** The host's own PostgreSQL schema, read by the test as the host's database. */
  database: DataSource;
  schema: string;
  output(): string;
  /** SIGTERM, the exit, then the schema and the folder go. */
  dispose(): Promise<void>;
}

export async function startHostApp(): Promise<HostApp> {
  ensureBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'agent-hooks-host-app-'));
  const schema = uniqueSchemaName();
  const database = await new DataSource({ type: 'postgres', url: DATABASE_URL, schema, poolSize: 2 }).initialize();
  let child: ChildProcess | undefined;
  let output = '';
  const dispose = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((done) => child!.once('exit', done));
      child.kill('SIGTERM');
      const killer = setTimeout(() => child?.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(killer);
    }
    await database.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await database.destroy();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const tarball = await packThisPackage(dir);
    const folder = join(dir, 'host-app');
    // The example's sources as committed: not a dist/ or node_modules/ left by a local try.
    cpSync(EXAMPLE, folder, { recursive: true, filter: (path) => !/^(dist|node_modules)(\/|$)/.test(relative(EXAMPLE, path).split(sep).join('/')) });
    await npm([...INSTALL_FLAGS, tarball], folder);
    await npm(['run', 'build'], folder);
    const env = { ...hostEnv(), DATABASE_URL, DATABASE_SCHEMA: schema, PORT: '0', HOST: '127.0.0.1' };
    await npm(['run', 'migrate'], folder, { DATABASE_URL, DATABASE_SCHEMA: schema });
    child = spawn(process.execPath, ['dist/main.js'], { cwd: folder, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const url = await new Promise<string>((found, failed) => {
      const timer = setTimeout(() => failed(new Error(`host-app did not start within 60 s:\n${output}`)), 60_000);
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        const match = /host-app listening on (http:\/\/\S+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          found(match[1]!.replace('[::1]', '127.0.0.1'));
        }
      };
      child!.stdout!.on('data', read);
      child!.stderr!.on('data', read);
      child!.once('exit', (code) => {
        clearTimeout(timer);
        failed(new Error(`host-app exited (${code}) before listening:\n${output}`));
      });
    });
    return { url, database, schema, output: () => output, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}
