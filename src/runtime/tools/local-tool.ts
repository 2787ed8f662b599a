/** A local tool as the registry holds it: its public definition and how to call it. */
import type { ToolResult } from '../../hooks/agent-events.js';
import type { RunContext } from '../../hooks/contexts.js';
import type { ToolDefinition } from './tool-types.js';

/** The second argument of a `@Tool` method. */
export interface LocalToolContext {
  readonly operationId: string;
  readonly toolCallId: string;
  /**
   * F1: the same on every attempt, re-run, takeover and process of this call — pass it to the system the
   * tool changes (e.g. as an `Idempotency-Key`) so a call that runs twice takes effect once.
   */
  readonly idempotencyKey: string;
  /** Aborted when the operation is cancelled or the tool's timeout passes; long work should stop. */
  readonly signal: AbortSignal;
  readonly runContext?: RunContext;
}

/**
 * What a `@Tool` method may return: a string (the content), a `ToolResult`-like object
 * `{ content, success?, data?, state? }`, or any other value, which is JSON-stringified into the content.
 */
export type LocalToolReturn = string | (Partial<ToolResult> & { content: string }) | unknown;

export type LocalToolHandler = (args: Record<string, unknown>, context: LocalToolContext) => unknown;

export interface LocalTool {
  readonly definition: ToolDefinition;
  readonly handler: LocalToolHandler;
  /** `ClassName.method`, for error messages. */
  readonly origin: string;
}
