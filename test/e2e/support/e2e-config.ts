/**
 * A scratch folder with the agents.yaml the HTTP tests use: one scripted model that asks for `clock/now`
 * then answers with its result, and agents that run it directly, behind an approval, or deferred.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

export const AGENTS_YAML = scriptedConfig({
  system: 'http-e2e',
  models: {
    clock: [toolCalls(call('clock/now')), answer('It is {{lastToolResult}}.')],
  },
  agents: {
    assistant: { model: 'clock', tools: ['clock/now'] },
    approver: { model: 'clock', tools: ['clock/now'], approval: ['^clock/'] },
    deferring: { model: 'clock', tools: ['clock/now'], deferred: ['^clock/'] },
  },
  hooks: { after_tool_call: [{ plugin: 'quickstart_hooks', method: 'auditToolCall', failure_policy: 'warn' }] },
});

export interface Scratch {
  dir: string;
  config: string;
  /** The repository's plugins manifest (the quickstart audit hook). */
  plugins: string;
  database(name: string): string;
  remove(): void;
}

export function scratch(prefix: string): Scratch {
  const dir = mkdtempSync(join(tmpdir(), `agent-hooks-${prefix}-`));
  const config = join(dir, 'agents.yaml');
  writeFileSync(config, AGENTS_YAML);
  return {
    dir,
    config,
    plugins: resolve('plugins/plugins.toml'),
    database: (name) => `sqlite:${join(dir, `${name}.sqlite`)}`,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
