/**
 * The tools offered to an agent's model in one step (SPEC G1), built by the catalog: the first tool of a
 * name wins, as the model is told about it. `get` is the only way a call finds its tool, so a name the
 * agent was not offered has none — whatever the model emits.
 */
import type { ToolDefinition, ToolOffer } from './tool-types.js';

interface UnreachableServer {
  serverId: string;
  /** Whether the `tools:` entry that selected the server selects this name. */
  selects(name: string): boolean;
  placeholder(serverId: string, apiName: string): ToolDefinition;
}

export class OfferedTools implements ToolOffer {
  private readonly byName = new Map<string, ToolDefinition>();
  private readonly unreachable: UnreachableServer[] = [];

  get tools(): readonly ToolDefinition[] {
    return [...this.byName.values()];
  }

  add(tool: ToolDefinition): void {
    const name = `${tool.identifier}/${tool.apiName}`;
    if (!this.byName.has(name)) this.byName.set(name, tool);
  }

  /** A selected MCP server that could not list its tools: names under it that the entry selects stay callable. */
  addUnreachable(serverId: string, selects: (name: string) => boolean, placeholder: (serverId: string, apiName: string) => ToolDefinition): void {
    this.unreachable.push({ serverId, selects, placeholder });
  }

  get(identifier: unknown, apiName: unknown): ToolDefinition | undefined {
    // W5 too: a call without string names matches nothing, never `"undefined/…"`.
    if (typeof identifier !== 'string' || typeof apiName !== 'string') return undefined;
    const name = `${identifier}/${apiName}`;
    const offered = this.byName.get(name);
    if (offered) return offered;
    const server = this.unreachable.find((candidate) => candidate.serverId === identifier && candidate.selects(name));
    return server?.placeholder(identifier, apiName);
  }
}
