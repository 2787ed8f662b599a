/**
 * DESIGN §9 / issue 15: the host's framework is a peer. The packed tarball is installed into a fresh host
 * app that brings its own @nestjs/common, @nestjs/core, typeorm, rxjs, reflect-metadata and better-sqlite3;
 * the host boots a plain ESM Nest app mounting `AgentHooksModule.forRoot`, with an `@OnHook` provider and a
 * `@Tool` provider, runs a scripted agent that calls the tool, and `npm ls` finds one copy of each peer.
 * Installs come from the npm cache (`--prefer-offline`).
 */
import { jest } from '@jest/globals';
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { hostEnv, INSTALL_FLAGS, npm, packThisPackage } from './support/host-npm.js';
import { ensureBuilt } from './support/server-process.js';

// Long on purpose: `npm install` of the tarball and its peers takes about 30 s here, and about 90 s more
// when better-sqlite3 has to compile (no local prebuild of the same version and Node ABI, below).
jest.setTimeout(300_000);

const run = promisify(execFile);
const FIXTURE = resolve('test/e2e/fixtures/packaging-host');
/**
 * The host's own framework, older than our dev copies (Nest 12.5, TypeORM 1.1, RxJS 7.8.2) and at the low end
 * of our peer ranges: plain dependencies would give the host a nested second copy; peers resolve to these.
 * (`reflect-metadata` 0.2.2 is what TypeORM 1 itself requires.)
 */
const HOST_PACKAGES = ['@nestjs/common@12.0.4', '@nestjs/core@12.0.4', 'typeorm@1.0.0', 'rxjs@7.8.0', 'reflect-metadata@0.2.2', 'better-sqlite3@12'];
const SINGLE_COPY = ['@nestjs/common', '@nestjs/core', 'typeorm', 'rxjs', 'reflect-metadata', '@nestjs/event-emitter'];

/**
 * better-sqlite3 compiles from source on install (about 80 s of CPU here: its prebuilt binaries are on
 * GitHub, out of reach). The host still installs its own copy from the registry cache; only the native
 * binary comes from a local prebuild (prebuild-install's `local-prebuilds`) packed from this repository's
 * build of the same version for the same Node ABI. Another version or ABI falls back to compiling.
 */
function localPrebuilds(folder: string): Record<string, string> {
  const binary = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node';
  if (!existsSync(binary)) return {};
  const { version } = JSON.parse(readFileSync('node_modules/better-sqlite3/package.json', 'utf8')) as { version: string };
  const staging = join(folder, 'staging');
  mkdirSync(join(staging, 'build', 'Release'), { recursive: true });
  cpSync(binary, join(staging, 'build', 'Release', 'better_sqlite3.node'));
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync('tar', ['-czf', join(folder, name), '-C', staging, 'build']);
  return { npm_config_better_sqlite3_local_prebuilds: folder };
}

let dir: string;
let host: string;

beforeAll(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'agent-hooks-packaging-'));
  host = join(dir, 'host');
  mkdirSync(join(host, 'config'), { recursive: true });
  const tarball = await packThisPackage(dir);
  writeFileSync(join(host, 'package.json'), `${JSON.stringify({ name: 'packaging-host', private: true, type: 'module' }, null, 2)}\n`);
  cpSync(join(FIXTURE, 'app.mjs'), join(host, 'app.mjs'));
  cpSync(join(FIXTURE, 'agents.yaml'), join(host, 'config', 'agents.yaml'));
  const prebuilds = localPrebuilds(join(dir, 'prebuilds'));
  await npm([...INSTALL_FLAGS, tarball, ...HOST_PACKAGES], host, prebuilds);
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('DESIGN §9 a host app installs the packed package next to its own framework', () => {
  it('boots, discovers the @OnHook handler and the @Tool, and runs an agent that calls the tool', async () => {
    const { stdout } = await run(process.execPath, ['app.mjs'], { cwd: host, env: hostEnv(), timeout: 60_000 });
    const output = JSON.parse(stdout.trim().split('\n').at(-1)!) as { reason: string; content: string; toolCalls: string[]; hooks: unknown[] };
    expect(output.reason).toBe('done');
    expect(output.toolCalls).toEqual(['apples']);
    expect(output.content).toBe('Counted: apples: 3');
    expect(output.hooks).toEqual([
      { point: 'beforeToolCall', tool: 'inventory/count', args: { item: 'apples' } },
      { point: 'afterToolCall', tool: 'inventory/count', result: expect.objectContaining({ content: 'apples: 3', success: true }) },
    ]);
  });

  it.each(SINGLE_COPY)('the host tree holds one copy of %s, the host\'s own', async (name) => {
    const paths = new Set((await npm(['ls', name, '--all', '--parseable'], host)).split('\n').filter(Boolean));
    expect([...paths]).toEqual([join(host, 'node_modules', name)]);
  });

  it('npm ls finds no invalid or missing package in the host tree (peer ranges satisfied)', async () => {
    // `npm ls` exits non-zero on ELSPROBLEMS (an invalid version, a missing required peer): execFile rejects.
    await expect(npm(['ls', '--all'], host)).resolves.toContain('nest-agent-hooks@');
  });
});
