/**
 * A throwaway project folder for plugin tests: `config/agents.yaml`, `plugins/…`, written for real, plus a
 * `node_modules/nest-agent-hooks` link to this repository, so a plugin that imports the package name
 * resolves to the BUILT package (`dist/index.js` through package.json `exports`), as it would for a user,
 * while the test itself imports the sources.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Builds dist/ when it is missing or stale (a plugin importing 'nest-agent-hooks' loads it). */
export function ensureBuilt(): void {
  execFileSync(process.execPath, ['scripts/build-if-needed.mjs'], { cwd: REPO_ROOT, stdio: 'pipe' });
}

export interface PluginProject {
  readonly dir: string;
  /** `<dir>/config/agents.yaml` (written only when given). */
  readonly configFile: string;
  /** `<dir>/plugins/plugins.toml`, the default location in the parent folder of `config/`. */
  readonly pluginsFile: string;
  path(relative: string): string;
  write(relative: string, text: string): string;
  remove(): void;
}

export function pluginProject(files: Record<string, string> = {}): PluginProject {
  const dir = mkdtempSync(join(tmpdir(), 'plugin-project-'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(REPO_ROOT, join(dir, 'node_modules', 'nest-agent-hooks'), 'dir');
  const project: PluginProject = {
    dir,
    configFile: join(dir, 'config', 'agents.yaml'),
    pluginsFile: join(dir, 'plugins', 'plugins.toml'),
    path: (relative) => join(dir, relative),
    write: (relative, text) => {
      const file = join(dir, relative);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
      return file;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
  for (const [relative, text] of Object.entries(files)) project.write(relative, text);
  return project;
}
