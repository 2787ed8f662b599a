/**
 * agents.yaml read as a plain YAML source, without the schema (for `agentctl validate` and `generate`):
 * validate still checks the hooks and the secret scan of a file whose schema is broken, so it can list
 * every problem at once; generate needs only the `hooks:` section. Throws `AgentsConfigError` when the file
 * cannot be read or is not YAML.
 */
import { readFile } from 'node:fs/promises';
import type { AgentsConfig } from './agents-config.js';
import { AgentsConfigError } from './config-error.js';
import { parseYamlSource, type YamlSource } from './yaml-source.js';

export interface RawConfig {
  readonly text: string;
  readonly source: YamlSource;
  /** Just enough of an `AgentsConfig` for `parseHooksSection` / `loadConfigHooks`. */
  readonly hooksConfig: Pick<AgentsConfig, 'hooks' | 'source'>;
}

export async function readRawConfig(file: string): Promise<RawConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    const why = typeof code === 'string' && /^[A-Z0-9_]{1,32}$/.test(code) ? ` (${code})` : '';
    throw new AgentsConfigError([{ file, path: '', message: `cannot read the config file${why}` }]);
  }
  const source = parseYamlSource(text, file);
  const data = source.data;
  const hasHooks = typeof data === 'object' && data !== null && !Array.isArray(data) && Object.hasOwn(data, 'hooks');
  const hooksConfig: Pick<AgentsConfig, 'hooks' | 'source'> = {
    ...(hasHooks ? { hooks: { data: (data as Record<string, unknown>).hooks, line: source.lineOf(['hooks']) } } : {}),
    source: { file, data, lineOf: source.lineOf },
  };
  return { text, source, hooksConfig };
}
