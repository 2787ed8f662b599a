/** Injection tokens and options of the tools room; the runtime provides them from its config. */
import type { ClientToolDeclaration } from './client-tools.js';
import { DEFAULT_TOOL_TIMEOUT_MS, type ToolEffects } from './tool-effects.js';

/**
 * `mcpServers` of `config/agents.yaml` (DESIGN §8, §12): `{ [serverId]: { url, idempotent?, timeoutMs?,
 * retry?, tools?: { [apiName]: { idempotent?, timeoutMs?, retry? } } } }`.
 */
export type McpServersConfig = Readonly<Record<string, McpServerSettings>>;
export interface McpServerSettings extends ToolEffects {
  readonly url: string;
  /** Per-tool overrides, by the tool's MCP name; they win over the server's settings. */
  readonly tools?: Readonly<Record<string, ToolEffects>>;
}
export const MCP_SERVERS = Symbol('nest-agent-hooks:McpServers');

/** `clientTools` of `config/agents.yaml` (DESIGN §8): tools an outside executor runs, always deferred. */
export type ClientToolsConfig = readonly ClientToolDeclaration[];
export const CLIENT_TOOLS = Symbol('nest-agent-hooks:ClientTools');

export interface ToolsOptions {
  /** F3: the deadline of a call no tool, server or agent sets one for; default 60 000 ms. */
  defaultTimeoutMs?: number;
  /** Bound on an MCP server's `initialize` and `tools/list`; default 10 000 ms. */
  mcpConnectTimeoutMs?: number;
}
export const TOOLS_OPTIONS = Symbol('nest-agent-hooks:ToolsOptions');

export { DEFAULT_TOOL_TIMEOUT_MS };
export const DEFAULT_MCP_CONNECT_TIMEOUT_MS = 10_000;
