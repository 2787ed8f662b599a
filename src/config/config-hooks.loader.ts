/**
 * The config hooks of agents.yaml as app hooks (SPEC E4–E7, DESIGN §3, §8): validates `hooks:`, loads
 * plugins.toml when it is needed (or given), imports the plugin modules and resolves every entry to a
 * `RegisteredHook` with source `config`. Every problem of the whole load is reported together in one
 * `AgentsConfigError`, each naming file, line and key path.
 *
 * Order: config hooks get `order` 0, the default of `@OnHook`, and are added to the registry before the
 * decorators are discovered; the registry keeps ties in registration order, so within a point the YAML
 * entries run first, in file order, then the decorators (DESIGN §3). `order` stays the one sort key over
 * all app hooks: a decorator with a negative `order` runs before the YAML entries, a positive one after.
 */
import type { HookHandlerFn, RegisteredHook } from '../hooks/registered-hook.js';
import type { AgentsConfig } from './agents-config.js';
import { AgentsConfigError, formatKeyPath, type ConfigIssue } from './config-error.js';
import { ConfigHookResolver } from './config-hook-resolver.js';
import { parseHooksSection, type HookEntry } from './hooks-section.js';
import { PluginModuleLoader } from './plugin-module-loader.js';
import { defaultPluginsFileCandidates, defaultPluginsRoot, findDefaultPluginsFile, loadPluginsManifest } from './plugins-manifest.js';

/** The `order` of every config hook (see above). */
export const CONFIG_HOOK_ORDER = 0;

export interface ConfigHooksOptions {
  /**
   * plugins.toml. Given, it is always loaded (and must exist); by default `plugins/plugins.toml` beside
   * the config file, else in its parent folder, loaded only when a `plugin:` entry needs it.
   */
  pluginsFile?: string;
}

export async function loadConfigHooks(config: Pick<AgentsConfig, 'hooks' | 'source'>, options: ConfigHooksOptions = {}): Promise<RegisteredHook[]> {
  const entries = parseHooksSection(config);
  const firstPluginEntry = entries.find((entry) => entry.target.kind === 'plugin');
  const pluginsFile = options.pluginsFile ?? (firstPluginEntry ? findDefaultPluginsFile(config.source.file) : undefined);
  if (firstPluginEntry && pluginsFile === undefined) {
    const path = [...firstPluginEntry.path, 'plugin'];
    const looked = defaultPluginsFileCandidates(config.source.file).join(' and ');
    throw new AgentsConfigError([
      { file: config.source.file, line: config.source.lineOf(path), path: formatKeyPath(path), message: `a plugin entry needs plugins.toml, and none was found (looked for ${looked})` },
    ]);
  }
  const manifest = pluginsFile === undefined ? undefined : await loadPluginsManifest(pluginsFile);
  if (entries.length === 0) return [];

  const issues: ConfigIssue[] = [];
  const loader = new PluginModuleLoader(manifest?.baseDir ?? defaultPluginsRoot(config.source.file));
  const resolver = new ConfigHookResolver(loader, manifest, config.source, issues);
  const hooks: RegisteredHook[] = [];
  // One entry at a time: file order for hooks and problems alike, and each module imported once.
  for (const entry of entries) {
    const handler = await resolver.handlerFor(entry);
    if (handler) hooks.push(toRegisteredHook(entry, handler));
  }
  if (issues.length > 0) throw new AgentsConfigError(issues);
  return hooks;
}

function toRegisteredHook(entry: HookEntry, handler: HookHandlerFn): RegisteredHook {
  const { target } = entry;
  return Object.freeze({
    id: target.kind === 'plugin' ? `${target.plugin}.${target.method}` : target.ref,
    point: entry.point,
    source: 'config' as const,
    ...(entry.matcher ? { matcher: entry.matcher } : {}),
    failurePolicy: entry.failurePolicy ?? 'fail',
    onError: entry.onError ?? 'continue',
    // Like `@OnHook`: an explicit onError makes a handler a control, never skipped by a mock.
    control: entry.onError !== undefined,
    order: CONFIG_HOOK_ORDER,
    handler,
    ...(target.kind === 'plugin' ? { plugin: target.plugin, method: target.method } : { ref: target.ref }),
  });
}
