/**
 * What every part of one step works with (DESIGN §3): built once by the `StepExecutor` when the step may
 * begin, then handed to each part — the model call, each tool call's route, `afterStep` — instead of long
 * parameter lists. Only `operation` changes during the step: each commit of the step replaces it.
 */
import type { AgentEventBase, ReachedLimit, TerminalReason } from '../hooks/agent-events.js';
import type { RunContext } from '../hooks/contexts.js';
import type { EnvironmentHooks } from '../hooks/hook-ports.js';
import type { ResolvedAgent } from './agent-directory.port.js';
import type { StepPatch, StoredMessage, StoredOperation } from './runtime-store.port.js';
import type { SubAgents } from './sub-agent.port.js';
import type { ToolOffer } from './tools/tool-types.js';

/**
 * `undefined`: the operation goes on to another step; `waiting`: it waits for a human or an outside executor.
 * A terminal reason set by a limit names it (`limit`, SPEC F4/F5): the terminal transition stores it.
 */
export type StepResult = { terminal: TerminalReason; limit?: ReachedLimit } | { waiting: true } | undefined;

export const WAITING = { waiting: true } as const;

export interface StepDispatchOptions {
  operationId: string;
  runContext: RunContext;
  signal: AbortSignal;
  /** The environment hooks as read when the step began (L1: every step, so every resume, reads them anew). */
  environment: EnvironmentHooks;
}

export interface StepContext {
  readonly operationId: string;
  readonly runContext: RunContext;
  /** The hard stop: cancel, or the end of the shutdown grace period. */
  readonly signal: AbortSignal;
  /** Queue mode: every commit of the step is fenced by this worker's lease. */
  readonly leaseOwner: string | undefined;
  readonly agent: ResolvedAgent;
  /** G1: what this agent's model is offered now — the one lookup every call of the step goes through. */
  readonly offer: ToolOffer;
  /** The conversation as read at the start of the step; the step's assistant message is appended once committed. */
  readonly messages: StoredMessage[];
  readonly dispatchOptions: StepDispatchOptions;
  /** Who starts the children of `agents/call` calls: the driver of the step (DESIGN §8). */
  readonly subAgents: SubAgents;
  /** The operation as this step last committed it. */
  operation: StoredOperation;
  /** The common fields of the next agent-family event: a fresh id and timestamp, the operation's current state. */
  base(): Omit<AgentEventBase, 'type'>;
  /** Cancelled, or the application is closing (SPEC G4): no further call or step begins. */
  halted(): boolean;
  /** Queue mode: the step's last commit lets the lease go when the step goes on (`StepInput.onLeaseReleased`). */
  readonly onLeaseReleased?: (operation: StoredOperation) => void;
  /**
   * The step's end (its next `stepIndex`, the lease let go), set by the executor for the step's last call
   * when nothing observes `afterStep`: that call's publish commits it too, one commit instead of two, and
   * sets `ended`. Unset: the step's end is a commit of its own after `afterStep`.
   */
  endWithPublish?: StepPatch;
  /** The step's end was committed with its last call's publish (`endWithPublish`). */
  ended?: boolean;
}
