/**
 * The runtime's `ToolCatalog` (tool-types.ts) over local `@Tool` methods and MCP server tools. `execute`
 * is the one place a tool runs: arguments checked against the JSON Schema (ajv), the tool's timeout and the
 * operation's AbortSignal enforced, every failure turned into a `ToolError` the runtime can report.
 */
import { Inject, Injectable, Optional, type OnApplicationBootstrap } from '@nestjs/common';
import type { ToolResult } from '../../hooks/agent-events.js';
import { errorType } from '../../hooks/hook-errors.js';
import { AGENT_CALL_API_NAME, AGENT_CALL_IDENTIFIER, AGENT_CALL_TOOL } from './agent-call.tool.js';
import { ArgumentValidator } from './argument-validator.js';
import { runBounded } from './bounded-run.js';
import { LateToolResults } from './late-tool-results.js';
import { LocalToolRegistry } from './local-tool.registry.js';
import { McpServersService } from './mcp-servers.service.js';
import { compileToolPattern, type ToolPattern } from './tool-pattern.js';
import { toToolResult } from './tool-result.js';
import { ToolConfigurationError } from './tool-errors.js';
import { ToolError, type ToolCatalog, type ToolDefinition, type ToolInvocation, type ToolOffer } from './tool-types.js';
import { CLIENT_TOOLS, DEFAULT_TOOL_TIMEOUT_MS, TOOLS_OPTIONS, type ClientToolsConfig, type ToolsOptions } from './tools.options.js';
import { clientToolDefinition, InvalidClientToolsError, validateClientTools, type ClientToolDeclaration } from './client-tools.js';
import { OfferedTools } from './offered-tools.js';

/** Accepts any object: the parameters of an MCP tool whose server has not answered yet. */
const ANY_OBJECT: Record<string, unknown> = Object.freeze({ type: 'object' });

@Injectable()
export class ToolCatalogService implements ToolCatalog, OnApplicationBootstrap {
  private readonly defaultTimeoutMs: number;
  /** The configured client tools (`clientTools:` of agents.yaml), by name. */
  private readonly configuredClientTools: ReadonlyMap<string, ToolDefinition>;
  /** Keyed by entry text; entries come from the config only (agents' `tools:`), so the map stays small. */
  private readonly patterns = new Map<string, ToolPattern>();

  constructor(
    private readonly local: LocalToolRegistry,
    private readonly mcp: McpServersService,
    private readonly validator: ArgumentValidator,
    @Optional() @Inject(TOOLS_OPTIONS) options?: ToolsOptions,
    @Optional() @Inject(CLIENT_TOOLS) clientTools?: ClientToolsConfig,
    @Optional() private readonly late?: LateToolResults,
  ) {
    this.defaultTimeoutMs = options?.defaultTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    this.configuredClientTools = new Map((clientTools ?? []).map((declaration) => [nameOf(declaration), clientToolDefinition(declaration)]));
  }

  /**
   * A local tool named like an MCP server would be shadowed for some calls and not others: refuse it. A
   * configured client tool may not take the name of a tool that runs here either.
   */
  onApplicationBootstrap(): void {
    for (const tool of this.configuredClientTools.values()) {
      const conflict = this.clientToolConflict(tool);
      if (conflict) throw new ToolConfigurationError(`clientTools.${nameOf(tool)}: the name is taken by ${conflict}`);
    }
    for (const tool of this.local.all()) {
      if (tool.definition.identifier === AGENT_CALL_IDENTIFIER && tool.definition.apiName === AGENT_CALL_API_NAME) {
        throw new ToolConfigurationError(`@Tool on ${tool.origin}: ${AGENT_CALL_IDENTIFIER}/${AGENT_CALL_API_NAME} is the built-in sub-agent tool`);
      }
      if (this.mcp.has(tool.definition.identifier)) {
        throw new ToolConfigurationError(`@Tool on ${tool.origin}: identifier ${tool.definition.identifier} is also the id of a configured MCP server`);
      }
    }
  }

  /**
   * Why a client tool may not have this name — it is a local tool, under an MCP server's id, or the
   * built-in — or undefined. A client tool never shadows a tool that runs here.
   */
  clientToolConflict(tool: Pick<ClientToolDeclaration, 'identifier' | 'apiName'>): string | undefined {
    if (tool.identifier === AGENT_CALL_IDENTIFIER) return 'the built-in sub-agent tool';
    if (this.local.get(tool.identifier, tool.apiName)) return 'a local @Tool';
    if (this.mcp.has(tool.identifier)) return 'a configured MCP server';
    return undefined;
  }

  declareClientTools(value: unknown, field = 'clientTools'): ClientToolDeclaration[] {
    const declared = validateClientTools(value, field, (schema) => this.validator.compileStrict(schema));
    declared.forEach((tool, index) => {
      const conflict = this.clientToolConflict(tool) ?? (this.configuredClientTools.has(nameOf(tool)) ? 'a configured client tool' : undefined);
      if (conflict) throw new InvalidClientToolsError(`${field}[${index}]: the name is taken by ${conflict}`);
    });
    return declared;
  }

  /**
   * G1: what an agent's `tools:` offers its model — local tools, MCP tools, the built-in it names, and the
   * client tools (configured and the operation's own) its globs select. While a selected MCP server cannot
   * be reached its tools are unknown: a call to a name the same entries select gets a placeholder, whose
   * execution asks the server again (and fails `not_found` if it has no such tool).
   */
  async offer(patterns: readonly string[], clientTools: readonly ClientToolDeclaration[] = []): Promise<ToolOffer> {
    const offered = new OfferedTools();
    // Configured first: the first tool of a name wins (OfferedTools.add).
    const clients = [...this.configuredClientTools.values(), ...clientTools.map(clientToolDefinition)];
    for (const source of patterns) {
      const pattern = this.pattern(source);
      if (pattern.kind === 'mcp') {
        if (!this.mcp.has(pattern.serverId)) continue;
        const listed = await this.listMcp(pattern.serverId);
        if (listed) for (const tool of listed) offered.add(tool);
        else offered.addUnreachable(pattern.serverId, () => true, this.placeholder);
        continue;
      }
      // Only an entry that names the built-in (`agents/call`, `agents/*`) offers it: `*` never hands out sub-agents.
      if (source.startsWith(`${AGENT_CALL_IDENTIFIER}/`) && pattern.matches(`${AGENT_CALL_IDENTIFIER}/${AGENT_CALL_API_NAME}`)) offered.add(AGENT_CALL_TOOL);
      for (const tool of this.local.all()) if (pattern.matches(nameOf(tool.definition))) offered.add(tool.definition);
      const servers = this.mcp.serverIds().filter((id) => pattern.mayMatchIdentifier(id));
      const listed = await Promise.all(servers.map((id) => this.listMcp(id)));
      listed.forEach((tools, i) => {
        if (tools) for (const tool of tools) if (pattern.matches(nameOf(tool))) offered.add(tool);
        if (!tools) offered.addUnreachable(servers[i]!, (name) => pattern.matches(name), this.placeholder);
      });
      for (const tool of clients) if (pattern.matches(nameOf(tool))) offered.add(tool);
    }
    return offered;
  }

  /** `tools:` entries compiled once each: every step offers again, and re2js compiling is the costly part. */
  private pattern(source: string): ToolPattern {
    let pattern = this.patterns.get(source);
    if (!pattern) {
      pattern = compileToolPattern(source);
      this.patterns.set(source, pattern);
    }
    return pattern;
  }

  /** What `patterns` offer, without per-operation client tools (the model's tool list of `offer`). */
  async toolsFor(patterns: readonly string[]): Promise<ToolDefinition[]> {
    return [...(await this.offer(patterns)).tools];
  }

  /**
   * A local tool, or an MCP tool of a configured server. While that server cannot be reached its tools are
   * unknown, so any name under its id is answered with a placeholder: executing it retries the server and
   * reports `unavailable` rather than `not_found`.
   */
  async find(identifier: string, apiName: string): Promise<ToolDefinition | undefined> {
    if (identifier === AGENT_CALL_IDENTIFIER && apiName === AGENT_CALL_API_NAME) return AGENT_CALL_TOOL;
    const local = this.local.get(identifier, apiName);
    if (local) return local.definition;
    const client = this.configuredClientTools.get(`${identifier}/${apiName}`);
    if (client) return client;
    if (!this.mcp.has(identifier)) return undefined;
    try {
      return (await this.mcp.tools(identifier)).find((tool) => tool.apiName === apiName);
    } catch (error) {
      if (!(error instanceof ToolError)) throw error;
      return this.placeholder(identifier, apiName);
    }
  }

  async execute(tool: ToolDefinition, args: Record<string, unknown>, invocation: ToolInvocation): Promise<ToolResult> {
    if (tool.source === 'agent') throw new ToolError('not_found', `${tool.identifier}/${tool.apiName} starts a sub-agent and is run by the step executor`);
    if (tool.source === 'client') throw new ToolError('not_found', `${tool.identifier}/${tool.apiName} is a client tool: an outside executor runs it`);
    const toolName = `${tool.identifier}/${tool.apiName}`;
    // F3: the tool's own deadline (an MCP tool's: its override, else its server's), else the agent's, else the default.
    const timeoutMs = tool.timeoutMs ?? invocation.agentTimeoutMs ?? this.defaultTimeoutMs;
    const started = performance.now();
    try {
      const result = await runBounded(
        (signal) => (tool.source === 'mcp' ? this.runMcp(tool, args, invocation, signal, timeoutMs) : this.runLocal(tool, args, invocation, signal)),
        { toolName, timeoutMs, signal: invocation.signal, onLate: () => this.late?.record({ source: tool.source }) },
      );
      return { ...result, executionTime: Math.round(performance.now() - started) };
    } catch (error) {
      if (error instanceof ToolError) throw error;
      throw new ToolError('execution_failed', `${toolName} failed: ${messageOf(error)}`, errorType(error), { cause: error });
    }
  }

  private async runLocal(tool: ToolDefinition, args: Record<string, unknown>, invocation: ToolInvocation, signal: AbortSignal): Promise<ToolResult> {
    const local = tool.source === 'local' ? this.local.get(tool.identifier, tool.apiName) : undefined;
    if (!local) throw new ToolError('not_found', `unknown tool ${tool.identifier}/${tool.apiName}`);
    this.checkArguments(local.definition, args);
    const returned = await local.handler(args, {
      operationId: invocation.operationId,
      toolCallId: invocation.toolCallId,
      idempotencyKey: invocation.idempotencyKey,
      signal,
      ...(invocation.runContext ? { runContext: invocation.runContext } : {}),
    });
    return toToolResult(returned);
  }

  private async runMcp(
    tool: ToolDefinition,
    args: Record<string, unknown>,
    invocation: ToolInvocation,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<ToolResult> {
    const serverId = tool.serverId ?? tool.identifier;
    // Validate against the schema the server announces now (the definition may be a placeholder or stale).
    const live = (await this.mcp.tools(serverId, invocation.runContext)).find((candidate) => candidate.apiName === tool.apiName);
    if (!live) throw new ToolError('not_found', `MCP server ${serverId} has no tool ${tool.apiName}`);
    this.checkArguments(live, args);
    return this.mcp.callTool(serverId, tool.apiName, args, {
      signal,
      timeoutMs,
      idempotencyKey: invocation.idempotencyKey,
      ...(invocation.runContext ? { runContext: invocation.runContext } : {}),
    });
  }

  /** Checks `args` against the tool's JSON Schema (ajv); throws `ToolError('invalid_arguments')`. */
  checkArguments(tool: ToolDefinition, args: unknown): void {
    const name = `${tool.identifier}/${tool.apiName}`;
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      throw new ToolError('invalid_arguments', `invalid arguments for ${name}: (root) must be object`);
    }
    const check = this.validator.check(tool.parameters, args);
    if (!check.valid) throw new ToolError('invalid_arguments', `invalid arguments for ${name}: ${check.summary}`);
  }

  /** A tool of a server that cannot be reached now: any arguments, the server's configured effects (F3). */
  private readonly placeholder = (serverId: string, apiName: string): ToolDefinition =>
    Object.freeze({
      identifier: serverId,
      apiName,
      description: '',
      parameters: ANY_OBJECT,
      requiresApproval: false,
      deferred: false,
      source: 'mcp' as const,
      serverId,
      ...this.mcp.effectsOf(serverId, apiName),
    });

  /** MCP tools of a server, or undefined while it is unavailable (logged once by the connection). */
  private async listMcp(serverId: string): Promise<ToolDefinition[] | undefined> {
    try {
      return await this.mcp.tools(serverId);
    } catch (error) {
      if (error instanceof ToolError) return undefined;
      throw error;
    }
  }
}


function nameOf(tool: Pick<ToolDefinition, 'identifier' | 'apiName'>): string {
  return `${tool.identifier}/${tool.apiName}`;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || errorType(error);
  return typeof error === 'string' ? error : errorType(error);
}
