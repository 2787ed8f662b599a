/**
 * The rules of `agents.yaml` that span sections (DESIGN §8): an agent's `model` names a defined model and
 * each `mcp:<server>` tools entry a defined MCP server. Run after the shape is valid. The reference is
 * quoted only when it looks like an id, so a misplaced key pasted into `model:` is never echoed.
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

/** Ids are names, not secrets; a value that looks like key material is never quoted. */
function quoted(reference: string): string {
  return CONFIG_ID.test(reference) && reference.length <= 40 && !/^(sk|pk|rk)[-_]/i.test(reference) ? ` "${reference}"` : '';
}

function defined(section: string, map: Record<string, unknown>): string {
  const ids = Object.keys(map);
  return ids.length === 0 ? ` (no ${section} are defined)` : ` (defined: ${ids.join(', ')})`;
}
