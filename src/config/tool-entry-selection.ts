/**
 * SPEC G7: every `tools:` entry of an agent must be able to select something — a local tool (`@Tool`,
 * built-ins such as `agents/call`), a declared client tool, or a tool of a configured MCP server (whose
 * tools are unknown until it answers, so an entry matching the server's id counts). A typo such as
 * `clock/nwo` would otherwise offer nothing, silently. Checked at bootstrap, once local tools are
 * discovered, and by `agentctl validate` with the standalone server's built-in tools.
 */
import { AGENT_CALL_API_NAME, AGENT_CALL_IDENTIFIER } from '../runtime/tools/agent-call.tool.js';
import { compileToolPattern, MCP_PATTERN_PREFIX } from '../runtime/tools/tool-pattern.js';
import { formatKeyPath, shownEntry, type ConfigIssue } from './config-error.js';
import type { AgentsConfig } from './agents-config.js';
import type { AgentEntry } from './agents-config.schema.js';
import type { ReferenceProblem } from './agents-config.references.js';
import { toolPatternProblem } from './tool-patterns.js';

export interface KnownTools {
  /** `identifier/apiName` of every local tool (deferred `@Tool`s included) and declared client tool. */
  readonly names: readonly string[];
  /** Ids of the configured MCP servers. */
  readonly mcpServers: readonly string[];
}

const AGENT_CALL = `${AGENT_CALL_IDENTIFIER}/${AGENT_CALL_API_NAME}`;

/** A tools entry that selects nothing, and the entry itself when it is safe to show (`shownEntry`). */
export interface ToolEntryProblem extends ReferenceProblem {
  readonly entry?: string;
}

/** Entries that select nothing, each named (a typo is found by reading it), unless it could be key material. */
export function toolEntryProblems(agents: Readonly<Record<string, Pick<AgentEntry, 'tools'>>>, known: KnownTools): ToolEntryProblem[] {
  const problems: ToolEntryProblem[] = [];
  for (const [agentId, agent] of Object.entries(agents)) {
    for (const [index, entry] of (agent.tools ?? []).entries()) {
      // Malformed entries and `mcp:<server>` are the schema's and the references' to report.
      if (toolPatternProblem(entry) !== undefined || entry.startsWith(MCP_PATTERN_PREFIX)) continue;
      if (!selectsSomething(entry, known)) {
        const shown = shownEntry(entry);
        problems.push({
          path: ['agents', agentId, 'tools', index],
          ...(shown !== undefined ? { entry: shown } : {}),
          message: 'selects no tool: no local tool, declared client tool or configured MCP server matches it',
        });
      }
    }
  }
  return problems;
}

function selectsSomething(entry: string, known: KnownTools): boolean {
  const pattern = compileToolPattern(entry);
  if (pattern.kind !== 'glob') return true;
  // As the catalog offers it: only an entry that names `agents/` selects the built-in sub-agent tool.
  if (entry.startsWith(`${AGENT_CALL_IDENTIFIER}/`) && pattern.matches(AGENT_CALL)) return true;
  return known.names.some((name) => pattern.matches(name)) || known.mcpServers.some((id) => pattern.mayMatchIdentifier(id));
}

/** Local tool names plus the config's MCP servers and declared client tools. */
export function knownToolsOf(config: Pick<AgentsConfig, 'mcpServers'> & { readonly clientTools?: Readonly<Record<string, unknown>> }, localNames: readonly string[]): KnownTools {
  return { names: [...localNames, ...Object.keys(config.clientTools ?? {})], mcpServers: Object.keys(config.mcpServers ?? {}) };
}

/** The problems as issues with the config's file, line and key path. */
export function toolEntryIssues(config: Pick<AgentsConfig, 'agents' | 'source'>, known: KnownTools): ConfigIssue[] {
  return toolEntryProblems(config.agents, known).map(({ path, entry, message }) => ({
    file: config.source.file,
    line: config.source.lineOf(path),
    path: formatKeyPath(path),
    ...(entry !== undefined ? { entry } : {}),
    message,
  }));
}
