/** The loaded `config/agents.yaml` (DESIGN §8), as the runtime and the later config validators see it. */
import type { KeyPath } from './config-error.js';
import type { AgentEntry, AgentLimitsEntry, AgentsConfigBody, McpServerEntry, ModelEntry } from './agents-config.schema.js';

export type ModelEntryConfig = ModelEntry;
export type McpServerConfig = McpServerEntry;
export type AgentConfig = AgentEntry;
export type AgentLimitsConfig = AgentLimitsEntry;

/**
 * Where the config came from, for validators that run after this loader (hooks, plugins, the secret
 * scan): they report their own errors with the same file, line and key path.
 */
export interface ConfigSource {
  /** The path as given to the loader (a relative path stays relative, as the user typed it). */
  readonly file: string;
  /** The whole document as plain data, unvalidated. */
  readonly data: unknown;
  lineOf(path: KeyPath): number;
}

/** `hooks:` exactly as written; validated with plugins by the engine-config loader, not here. */
export interface RawHooksSection {
  readonly data: unknown;
  /** The line of the `hooks:` key. */
  readonly line: number;
}

/**
 * Maps are plain objects keyed by id: look ids up with `Object.hasOwn` (an id such as `constructor` is
 * valid and must not resolve to a prototype member).
 */
export interface AgentsConfig extends Omit<AgentsConfigBody, 'hooks'> {
  readonly hooks?: RawHooksSection;
  readonly source: ConfigSource;
}
