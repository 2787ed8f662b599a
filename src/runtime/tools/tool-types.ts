/** Tools as the runtime sees them: local `@Tool` methods and MCP server tools behind one catalog. */
import type { ToolResult } from '../../hooks/agent-events.js';
import type { RunContext } from '../../hooks/contexts.js';
import type { ClientToolDeclaration } from './client-tools.js';
import type { ToolEffects } from './tool-effects.js';

export interface ToolDefinition extends ToolEffects {
  identifier: string;
  apiName: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
  requiresApproval: boolean;
  deferred: boolean;
  /**
   * `local` for `@Tool` methods, `mcp` for MCP server tools, `agent` for the built-in `agents/call`,
   * `client` for declared client tools (always deferred, never executed here).
   */
  source: 'local' | 'mcp' | 'agent' | 'client';
  /** For MCP tools: the server id (= identifier). */
  serverId?: string;
}

export interface ToolInvocation {
  operationId: string;
  toolCallId: string;
  /** F1: the call's idempotency key, handed to the tool (context, MCP `_meta` and header). */
  idempotencyKey: string;
  signal: AbortSignal;
  runContext?: RunContext;
  /** F3: the agent's deadline, for a tool (or MCP server) that sets none. */
  agentTimeoutMs?: number;
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

/**
 * The tools offered to an agent's model in one step (SPEC G1): what the model is told about, and the one
 * lookup a call goes through. A call whose name `get` does not know is never executed, held for approval
 * or handed out: it is `tool_not_available`.
 */
export interface ToolOffer {
  readonly tools: readonly ToolDefinition[];
  /** The offered tool of this name; names that are not strings are never offered. */
  get(identifier: unknown, apiName: unknown): ToolDefinition | undefined;
}

/** Runs tools; implemented by the tools room (local + MCP + declared client tools). */
export interface ToolCatalog {
  /** Tools an agent may use: globs over `identifier/apiName` (`clock/*`) or `mcp:<server>`. */
  toolsFor(patterns: readonly string[]): Promise<ToolDefinition[]>;
  /**
   * What `patterns` (an agent's `tools:`) offer among local, MCP and client tools — the configured client
   * tools and the operation's own `clientTools`.
   */
  offer(patterns: readonly string[], clientTools?: readonly ClientToolDeclaration[]): Promise<ToolOffer>;
  find(identifier: string, apiName: string): Promise<ToolDefinition | undefined>;
  /**
   * An operation's `clientTools` (untrusted input): validated, bounded, and refused where a name is taken
   * by a tool that runs here; throws `InvalidClientToolsError` naming the field.
   */
  declareClientTools(value: unknown, field?: string): ClientToolDeclaration[];
  /** Checks `args` against the tool's JSON Schema; throws `ToolError('invalid_arguments')`. */
  checkArguments(tool: ToolDefinition, args: unknown): void;
  /** Validates `args` (ajv) and runs the tool under its timeout; throws `ToolError`. */
  execute(tool: ToolDefinition, args: Record<string, unknown>, invocation: ToolInvocation): Promise<ToolResult>;
}
export const TOOL_CATALOG = Symbol('nest-agent-hooks:ToolCatalog');
