/** Tools as the runtime sees them: local `@Tool` methods and MCP server tools behind one catalog. */
import type { ToolResult } from '../../hooks/agent-events.js';
import type { RunContext } from '../../hooks/contexts.js';

export interface ToolDefinition {
  identifier: string;
  apiName: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
  requiresApproval: boolean;
  deferred: boolean;
  timeoutMs?: number;
  /** `local` for `@Tool` methods, `mcp` for MCP server tools, `agent` for the built-in `agents/call`. */
  source: 'local' | 'mcp' | 'agent';
  /** For MCP tools: the server id (= identifier). */
  serverId?: string;
}

export interface ToolInvocation {
  operationId: string;
  toolCallId: string;
  signal: AbortSignal;
  runContext?: RunContext;
}

/** Why a tool did not produce a result; the runtime turns it into `on_tool_error` + `onToolCallError`. */
export class ToolError extends Error {
  override readonly name = 'ToolError';

  constructor(
    readonly code: 'not_found' | 'invalid_arguments' | 'timeout' | 'execution_failed' | 'unavailable' | 'cancelled',
    message: string,
    /** The original error's type name (S3: types, not messages, go to observe-only contexts). */
    readonly errorType: string = 'ToolError',
    /** `{ cause }`: the original error, for debugging; never shown to hooks or the model. */
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Runs tools; implemented by the tools room (local + MCP). */
export interface ToolCatalog {
  /** Tools an agent may use: globs over `identifier/apiName` (`clock/*`) or `mcp:<server>`. */
  toolsFor(patterns: readonly string[]): Promise<ToolDefinition[]>;
  find(identifier: string, apiName: string): Promise<ToolDefinition | undefined>;
  /** Validates `args` (ajv) and runs the tool under its timeout; throws `ToolError`. */
  execute(tool: ToolDefinition, args: Record<string, unknown>, invocation: ToolInvocation): Promise<ToolResult>;
}
export const TOOL_CATALOG = Symbol('nest-agent-hooks:ToolCatalog');
