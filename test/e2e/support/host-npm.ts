/**
 * npm for the host apps the e2e tests install the packed package into (packaging.spec.ts, host-app.spec.ts):
 * `npm pack` of this repository, and npm or node run in the host's folder with the host's own environment.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The environment of a child npm or node: without the `npm_*` variables of the `npm test` that started Jest
 * (`npm_config_local_prefix` would point the host's install at this repository), but keeping the cache and
 * the headers native builds use (`npm_config_nodedir` selects Node 24's in the Node 24 CI pass).
 */
export function hostEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(name) && !/^npm_config_(nodedir|cache)$/i.test(name)) continue;
    if (name === 'NODE_OPTIONS') continue;
    env[name] = value;
  }
  return env;
}

export async function npm(args: string[], cwd: string, extraEnv: Record<string, string> = {}): Promise<string> {
  const { stdout } = await run('npm', args, { cwd, env: { ...hostEnv(), ...extraEnv }, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** `npm pack` of this repository (built first by the caller) into `folder`; the tarball's path. */
export async function packThisPackage(folder: string): Promise<string> {
  const packed = JSON.parse(await npm(['pack', '--json', '--ignore-scripts', '--pack-destination', folder], process.cwd())) as { filename: string }[];
  return join(folder, packed[0]!.filename);
}

/** Installs from the npm cache (`--prefer-offline`): the machines running the tests need no registry. */
export const INSTALL_FLAGS = ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];
