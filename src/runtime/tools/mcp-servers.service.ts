/**
 * The configured MCP servers (`mcpServers`, DESIGN §8) as a set of lazily connected clients. Starting the
 * app never waits for a server: connections are warmed in the background after bootstrap, an unreachable
 * server is only logged, and its tools answer `ToolError('unavailable')` until it is back (DESIGN §8).
 * Every HTTP request made here fires the MCP hooks, inside a run or not (E2).
 */
import { AgentTracer } from '../../tracing/agent-tracer.js';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap } from '@nestjs/common';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolResult } from '../../hooks/agent-events.js';
import type { RunContext } from '../../hooks/contexts.js';
import { HookDispatcher } from '../../hooks/hook-dispatcher.js';
import { MAX_IDENTIFIER_LENGTH } from '../../hooks/input-limits.js';
import { McpServerConnection, type McpCallOptions, type McpServerState } from './mcp-client.js';
import { fromMcpResult } from './mcp-result.js';
import { ToolConfigurationError } from './tool-errors.js';
import type { ToolEffects } from './tool-effects.js';
import { ToolError, type ToolDefinition } from './tool-types.js';
import { DEFAULT_MCP_CONNECT_TIMEOUT_MS, MCP_SERVERS, TOOLS_OPTIONS, type McpServersConfig, type ToolsOptions } from './tools.options.js';

const NAME_PART = /^[A-Za-z0-9_.-]+$/;

@Injectable()
export class McpServersService implements OnApplicationBootstrap {
  private readonly logger = new Logger('AgentHooks:MCP');
  private readonly connections = new Map<string, McpServerConnection>();
  private readonly runContexts = new AsyncLocalStorage<RunContext | undefined>();
  private readonly settings: McpServersConfig;

  constructor(
    dispatcher: HookDispatcher,
    @Optional() @Inject(MCP_SERVERS) servers?: McpServersConfig,
    @Optional() @Inject(TOOLS_OPTIONS) options?: ToolsOptions,
    /** SPEC O1, O2: each MCP HTTP request as a client span, with `traceparent`. */
    @Optional() tracer?: AgentTracer,
  ) {
    this.settings = servers ?? {};
    for (const [serverId, server] of Object.entries(servers ?? {})) {
      this.connections.set(
        serverId,
        new McpServerConnection({
          serverId,
          url: serverUrl(serverId, server),
          dispatcher,
          runContexts: this.runContexts,
          connectTimeoutMs: options?.mcpConnectTimeoutMs ?? DEFAULT_MCP_CONNECT_TIMEOUT_MS,
          logger: this.logger,
          ...(tracer ? { tracer } : {}),
        }),
      );
    }
  }

  /** Warms every connection (initialize + tools/list) without holding up the start. */
  onApplicationBootstrap(): void {
    for (const connection of this.connections.values()) {
      connection.tools().catch(() => undefined); // logged by the connection; retried on next use
    }
  }

  /**
   * Ends every session (HTTP DELETE through the hooks). Not a lifecycle hook of its own: the
   * `ShutdownCoordinator` calls it once no step runs any more, so no tool result comes from a closed client (G4).
   */
  async close(): Promise<void> {
    await Promise.all([...this.connections.values()].map((connection) => connection.close()));
  }

  serverIds(): readonly string[] {
    return [...this.connections.keys()];
  }

  has(serverId: string): boolean {
    return this.connections.has(serverId);
  }

  state(serverId: string): McpServerState | undefined {
    return this.connections.get(serverId)?.state;
  }

  /** The server's tools as catalog definitions; throws `ToolError('unavailable')` while it cannot be reached. */
  async tools(serverId: string, runContext?: RunContext): Promise<ToolDefinition[]> {
    const tools = await this.connection(serverId).tools(runContext);
    const definitions: ToolDefinition[] = [];
    for (const tool of tools) {
      // `identifier/apiName` must stay splittable and match like local tool names.
      // G6: a name too long for the database columns is not offered either.
      if (!NAME_PART.test(tool.name) || tool.name.length > MAX_IDENTIFIER_LENGTH) continue;
      definitions.push(toDefinition(serverId, tool, this.effectsOf(serverId, tool.name)));
    }
    return definitions;
  }

  /** F2, F3: a tool's configured effects — its own override field by field over its server's. */
  effectsOf(serverId: string, apiName: string): ToolEffects {
    const server = Object.hasOwn(this.settings, serverId) ? this.settings[serverId] : undefined;
    if (!server) return {};
    const own = server.tools && Object.hasOwn(server.tools, apiName) ? server.tools[apiName] : undefined;
    const idempotent = own?.idempotent ?? server.idempotent;
    const timeoutMs = own?.timeoutMs ?? server.timeoutMs;
    // The config refuses a retry that would reach a non-idempotent tool; checked again here all the same.
    const retry = idempotent === true ? (own?.retry ?? server.retry) : undefined;
    return { ...(idempotent !== undefined ? { idempotent } : {}), ...(timeoutMs !== undefined ? { timeoutMs } : {}), ...(retry ? { retry } : {}) };
  }

  /** Calls `apiName` on the server; `isError` results come back as `success: false`. Throws `ToolError`. */
  async callTool(serverId: string, apiName: string, args: Record<string, unknown>, options: McpCallOptions): Promise<ToolResult> {
    return fromMcpResult(await this.connection(serverId).callTool(apiName, args, options));
  }

  private connection(serverId: string): McpServerConnection {
    const connection = this.connections.get(serverId);
    if (!connection) throw new ToolError('not_found', `no MCP server ${serverId} is configured`);
    return connection;
  }
}

function serverUrl(serverId: string, server: { url: string } | undefined): URL {
  if (!NAME_PART.test(serverId)) throw new ToolConfigurationError(`mcpServers.${serverId}: the server id must match ${NAME_PART.source}`);
  let url: URL;
  try {
    url = new URL(String(server?.url));
  } catch {
    throw new ToolConfigurationError(`mcpServers.${serverId}.url: not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ToolConfigurationError(`mcpServers.${serverId}.url: only http and https are supported (Streamable HTTP)`);
  }
  return url;
}

function toDefinition(serverId: string, tool: McpTool, effects: ToolEffects): ToolDefinition {
  return Object.freeze({
    ...effects,
    identifier: serverId,
    apiName: tool.name,
    description: tool.description ?? tool.title ?? '',
    parameters: tool.inputSchema as Record<string, unknown>,
    requiresApproval: false,
    deferred: false,
    source: 'mcp' as const,
    serverId,
  });
}
