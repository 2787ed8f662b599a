/**
 * The rules of `agents.yaml` that span sections (DESIGN §8): an agent's `model` and `fallback` entries name
 * defined models, without repeats (K4), and each `mcp:<server>` tools entry a defined MCP server. Run after
 * the shape is valid. A reference is quoted only when it looks like an id, so a misplaced key pasted into
 * `model:` is never echoed.
 */
import type { KeyPath } from './config-error.js';
import { CONFIG_ID } from './agents-config.schema.js';
import type { AgentsConfigBody } from './agents-config.schema.js';
import { MCP_PATTERN_PREFIX } from './tool-patterns.js';

export interface ReferenceProblem {
  readonly path: KeyPath;
  readonly message: string;
}

export function referenceProblems(config: AgentsConfigBody): ReferenceProblem[] {
  const problems: ReferenceProblem[] = [];
  for (const [agentId, agent] of Object.entries(config.agents)) {
    if (!Object.hasOwn(config.models, agent.model)) {
      problems.push({ path: ['agents', agentId, 'model'], message: `unknown model${quoted(agent.model)}${defined('models', config.models)}` });
    }
    problems.push(...fallbackProblems(config, agentId, agent.model, agent.fallback ?? []));
    for (const [index, pattern] of (agent.tools ?? []).entries()) {
      if (!pattern.startsWith(MCP_PATTERN_PREFIX)) continue;
      const serverId = pattern.slice(MCP_PATTERN_PREFIX.length);
      if (!Object.hasOwn(config.mcpServers, serverId)) {
        problems.push({ path: ['agents', agentId, 'tools', index], message: `unknown MCP server${quoted(serverId)}${defined('mcpServers', config.mcpServers)}` });
      }
    }
  }
  return problems;
}

/**
 * K4: each fallback names a defined model that is not already in the agent's chain — neither the agent's
 * own model nor an earlier fallback — so a call never goes back to a model it has given up on.
 */
function fallbackProblems(config: AgentsConfigBody, agentId: string, own: string, fallback: readonly string[]): ReferenceProblem[] {
  const problems: ReferenceProblem[] = [];
  const chain = new Set([own]);
  for (const [index, modelId] of fallback.entries()) {
    const path = ['agents', agentId, 'fallback', index];
    if (!Object.hasOwn(config.models, modelId)) problems.push({ path, message: `unknown model${quoted(modelId)}${defined('models', config.models)}` });
    else if (modelId === own) problems.push({ path, message: `model${quoted(modelId)} is the agent's own model: a fallback must be another model` });
    else if (chain.has(modelId)) problems.push({ path, message: `model${quoted(modelId)} is already an earlier fallback: each model is tried once (a cycle)` });
    chain.add(modelId);
  }
  return problems;
}

/** Ids are names, not secrets; a value that looks like key material is never quoted. */
function quoted(reference: string): string {
  return CONFIG_ID.test(reference) && reference.length <= 40 && !/^(sk|pk|rk)[-_]/i.test(reference) ? ` "${reference}"` : '';
}

function defined(section: string, map: Record<string, unknown>): string {
  const ids = Object.keys(map);
  return ids.length === 0 ? ` (no ${section} are defined)` : ` (defined: ${ids.join(', ')})`;
}
