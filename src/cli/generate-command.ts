/**
 * `agentctl generate` (SPEC E5, DESIGN §8–§9): creates plugins.toml when it is missing and adds
 * an entry for every plugin id the `hooks:` section of agents.yaml uses (`research_hooks` →
 * `plugins/hooks/research-hooks:ResearchHooks`). Existing entries are kept unless `--force`; hand edits
 * survive (plugins-manifest-writer.ts edits the text); the output is deterministic, so a second run changes
 * nothing. Only `hooks:` has to be valid: generate prepares plugins.toml, `validate` checks the rest.
 * Exit 0, or 2 with every problem of the hooks section or of the existing plugins file.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { AgentsConfigError, formatIssue } from '../config/config-error.js';
import { parseHooksSection } from '../config/hooks-section.js';
import { defaultPluginsRoot, findDefaultPluginsFile, parsePluginsManifest } from '../config/plugins-manifest.js';
import { ManifestLayoutError, mergePluginsManifest, newPluginsManifest, type ManifestMerge } from '../config/plugins-manifest-writer.js';
import { readRawConfig } from '../config/raw-config-source.js';

export interface GenerateOptions {
  config: string;
  plugins?: string;
  force?: boolean;
}

export async function generateCommand(options: GenerateOptions, out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  try {
    const file = options.plugins ?? findDefaultPluginsFile(options.config) ?? newManifestPath(options.config);
    const ids = await pluginIdsUsed(options.config);
    const existing = existsSync(file) ? await readFile(file, 'utf8') : undefined;
    const merge = existing === undefined ? newPluginsManifest(ids) : mergeInto(existing, file, ids, options.force === true);
    if (existing !== undefined && merge.text === existing) {
      out.write(`${file} is up to date (${ids.length} plugin id${ids.length === 1 ? '' : 's'} used)\n`);
      return 0;
    }
    // The merged text must still be a valid manifest declaring every id: never write a broken file.
    const check = parsePluginsManifest(merge.text, file);
    const missing = ids.filter((id) => !check.plugins.has(id));
    if (missing.length > 0) throw new ManifestLayoutError(`the merged file would not declare: ${missing.join(', ')}`);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, merge.text);
    out.write(summary(file, existing === undefined, merge));
    return 0;
  } catch (error) {
    if (error instanceof AgentsConfigError) {
      err.write(error.issues.map((issue) => `${formatIssue(issue)}\n`).join(''));
      return 2;
    }
    if (error instanceof ManifestLayoutError) {
      err.write(`agentctl generate: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

/** The sorted, unique plugin ids of the `plugin:` entries of `hooks:`. */
async function pluginIdsUsed(configFile: string): Promise<string[]> {
  const raw = await readRawConfig(configFile);
  const ids = parseHooksSection(raw.hooksConfig).flatMap((entry) => (entry.target.kind === 'plugin' ? [entry.target.plugin] : []));
  return [...new Set(ids)].sort();
}

function mergeInto(text: string, file: string, ids: readonly string[], force: boolean): ManifestMerge {
  // Parsing first validates the file (syntax, layout, secret scan): a broken file is reported, not edited.
  const declared = new Set(parsePluginsManifest(text, file).plugins.keys());
  return mergePluginsManifest(text, declared, ids, force);
}

/** No plugins file yet: `plugins/plugins.toml` in the folder that already holds `plugins/`, else beside agents.yaml. */
function newManifestPath(configFile: string): string {
  const path = join(defaultPluginsRoot(configFile), 'plugins', 'plugins.toml');
  const shown = relative(process.cwd(), path);
  return shown.startsWith('..') ? path : shown;
}

function summary(file: string, created: boolean, merge: ManifestMerge): string {
  const lines = [created ? `created ${file}` : `updated ${file}`];
  if (merge.added.length > 0) lines.push(`  added: ${merge.added.join(', ')}`);
  if (merge.replaced.length > 0) lines.push(`  replaced (--force): ${merge.replaced.join(', ')}`);
  return lines.join('\n') + '\n';
}
