/**
 * What the step executor needs to run the built-in `agents/call` tool (DESIGN §8): start a child operation,
 * and backfill the parent's placeholder when a child cannot start. The executor owns this port; whoever
 * drives a step passes an implementation with it (`StepInput.subAgents`) — `OperationStart`, which starts
 * operations and reaches the executor through the scheduler, so the executor never depends on it.
 */
import type { RunContext } from '../hooks/contexts.js';

export interface SubAgentStart {
  parentOperationId: string;
  /** The parent's `agents/call` tool call the child answers through the completion bridge (P5). */
  parentToolCallId: string;
  agentId: string;
  instruction: string;
  runContext: RunContext;
}

export interface SubAgents {
  /** Creates and starts the child operation (its own `threadId`, V1). */
  startChild(start: SubAgentStart): Promise<{ operationId: string; threadId: string }>;
  /** The one way a result reaches a waiting placeholder: after-hooks, then the compare-and-set write (P4). */
  completeDeferred(operationId: string, toolCallId: string, result: { content: string; success?: boolean }): Promise<unknown>;
}
