/** Injection tokens and options of the tools room; the runtime provides them from its config. */
import type { ClientToolDeclaration } from './client-tools.js';

/** `mcpServers` of `config/agents.yaml` (DESIGN §8): `{ [serverId]: { url } }`. */
export type McpServersConfig = Readonly<Record<string, { readonly url: string }>>;
export const MCP_SERVERS = Symbol('nest-agent-hooks:McpServers');

/** `clientTools` of `config/agents.yaml` (DESIGN §8): tools an outside executor runs, always deferred. */
export type ClientToolsConfig = readonly ClientToolDeclaration[];
export const CLIENT_TOOLS = Symbol('nest-agent-hooks:ClientTools');

export interface ToolsOptions {
  /** Timeout of a tool without its own `timeoutMs` (every MCP tool); default 30 000 ms. */
  defaultTimeoutMs?: number;
  /** Bound on an MCP server's `initialize` and `tools/list`; default 10 000 ms. */
  mcpConnectTimeoutMs?: number;
}
export const TOOLS_OPTIONS = Symbol('nest-agent-hooks:ToolsOptions');

export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;
export const DEFAULT_MCP_CONNECT_TIMEOUT_MS = 10_000;
