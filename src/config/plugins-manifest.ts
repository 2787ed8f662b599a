/**
 * `plugins/plugins.toml` (SPEC E5, DESIGN §8): `[hooks.plugins]` maps a plugin id to
 * `"module/path:ClassName"`; it is the only place plugin import paths live. The file is scanned for
 * literal secrets first, then checked strictly (an unknown key is an error, not a silent typo). Module
 * paths are relative to the folder that holds the `plugins/` folder, i.e. the parent of the file's folder.
 */
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { CONFIG_ID } from './agents-config.schema.js';
import { AgentsConfigError, formatKeyPath, type ConfigIssue, type KeyPath } from './config-error.js';
import { parseModuleReference } from './module-reference.js';
import { scanForSecrets } from './secret-scanner.js';
import { parseTomlSource } from './toml-source.js';

export interface PluginDeclaration {
  readonly id: string;
  readonly modulePath: string;
  /** The class to instantiate (once per plugin id). */
  readonly exportName: string;
  /** `['hooks', 'plugins', id]`, for errors found while loading the plugin. */
  readonly path: KeyPath;
  readonly line: number;
}

export interface PluginsManifest {
  /** The path as given (relative paths stay relative in messages). */
  readonly file: string;
  /** Where module paths start: the folder holding the `plugins/` folder. */
  readonly baseDir: string;
  /** By plugin id; look ids up with `Object.hasOwn`-safe `Map#get`. */
  readonly plugins: ReadonlyMap<string, PluginDeclaration>;
}

const CONFIG_BLOCK = 'plugins take no `config:` block: a hook reads its values in code, from environment variables or the RunContext (SPEC E4)';

/** Where the default plugins file may be: `plugins/plugins.toml` beside agents.yaml, then in its parent folder. */
export function defaultPluginsFileCandidates(configFile: string): string[] {
  const configDir = dirname(configFile);
  return [join(configDir, 'plugins', 'plugins.toml'), join(configDir, '..', 'plugins', 'plugins.toml')];
}

/** The first default candidate that exists, if any. */
export function findDefaultPluginsFile(configFile: string): string | undefined {
  return defaultPluginsFileCandidates(configFile).find(isFile);
}

/**
 * Where module paths start when there is no plugins file (a config with `ref:` entries only): the folder
 * holding a `plugins/` folder, beside agents.yaml or in its parent, else agents.yaml's own folder.
 */
export function defaultPluginsRoot(configFile: string): string {
  const configDir = resolve(dirname(configFile));
  for (const dir of [configDir, dirname(configDir)]) if (isDirectory(join(dir, 'plugins'))) return dir;
  return configDir;
}

/** The folder holding the `plugins/` folder that holds `pluginsFile`. */
export function pluginsBaseDir(pluginsFile: string): string {
  return dirname(dirname(resolve(pluginsFile)));
}

export async function loadPluginsManifest(file: string): Promise<PluginsManifest> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    const why = typeof code === 'string' && /^[A-Z0-9_]{1,32}$/.test(code) ? ` (${code})` : '';
    throw new AgentsConfigError([{ file, path: '', message: `cannot read the plugins file${why}` }]);
  }
  return parsePluginsManifest(text, file);
}

/** Parses plugins.toml text; `file` names the source in errors and sets the base folder of module paths. */
export function parsePluginsManifest(text: string, file: string): PluginsManifest {
  const source = parseTomlSource(text, file);
  const secrets = scanForSecrets(source);
  if (secrets.length > 0) throw new AgentsConfigError(secrets);

  const issues: ConfigIssue[] = [];
  const report = (path: KeyPath, message: string): void => {
    issues.push({ file, line: source.lineOf(path), path: formatKeyPath(path), message });
  };
  const plugins = new Map<string, PluginDeclaration>();
  const table = (value: unknown, path: KeyPath, allowed: string): Record<string, unknown> | undefined => {
    if (isTable(value)) return value;
    report(path, `must be a table (${allowed})`);
    return undefined;
  };
  const unknownKeys = (value: Record<string, unknown>, path: KeyPath, allowed: string): void => {
    for (const key of Object.keys(value)) {
      if (key !== allowed) report([...path, key], key === 'config' ? CONFIG_BLOCK : `unknown key (allowed: ${allowed})`);
    }
  };

  unknownKeys(source.data, [], 'hooks');
  const hooks = source.data.hooks === undefined ? undefined : table(source.data.hooks, ['hooks'], '[hooks.plugins]');
  if (hooks) unknownKeys(hooks, ['hooks'], 'plugins');
  const declared = hooks?.plugins === undefined ? undefined : table(hooks.plugins, ['hooks', 'plugins'], 'plugin id = "module/path:ClassName"');
  for (const [id, value] of Object.entries(declared ?? {})) {
    const path: KeyPath = ['hooks', 'plugins', id];
    if (!CONFIG_ID.test(id)) {
      report(path, 'a plugin id must be letters, digits, "_" and "-", starting with a letter or digit, at most 64 characters');
      continue;
    }
    if (isTable(value) && Object.hasOwn(value, 'config')) {
      report([...path, 'config'], CONFIG_BLOCK);
      continue;
    }
    const parsed = typeof value === 'string' ? parseModuleReference(value, false) : 'must be a string "module/path:ClassName"';
    if (typeof parsed === 'string') {
      report(path, parsed);
      continue;
    }
    plugins.set(id, { id, modulePath: parsed.modulePath, exportName: parsed.exportName, path, line: source.lineOf(path) });
  }
  if (issues.length > 0) throw new AgentsConfigError([...issues].sort((a, b) => (a.line ?? 0) - (b.line ?? 0)));
  return { file, baseDir: pluginsBaseDir(file), plugins };
}

function isTable(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === null || prototype === Object.prototype;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
