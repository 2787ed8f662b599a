/**
 * What the HTTP API and the metrics read of operations (the `persistence/` room implements it): the server
 * reads through this port, never through persistence's stores, entities or records (DESIGN §2). It speaks
 * the runtime's vocabulary (`runtime-store.port.ts`); writes go through the runtime (`AgentRuntime`).
 */
import type { HookOutcome, TimelineSource } from '../hooks/hook-outcome.js';
import type { HookPoint } from '../hooks/hook-points.js';
import type { OperationStatus, StoredIntervention, StoredMessage, StoredOperation } from './runtime-store.port.js';
import type { TerminalReason, UsageTotals } from '../hooks/agent-events.js';

/** One timeline row (DESIGN §7 `GET …/timeline`): one hook invocation's outcome. */
export interface TimelineRow {
  /** Counts within the operation; 0 only on a row of an older version. */
  seq: number;
  operationId: string;
  at: string;
  point: HookPoint;
  hookId: string;
  source: TimelineSource;
  outcome: HookOutcome;
  errorCode?: string;
  latencyMs: number;
  /** A tool point's row: the call it belongs to, from which its idempotency key is derived (F1). */
  toolCallId?: string;
}

/** How many operations have this status (and, completed ones, this terminal reason). */
export interface OperationCount {
  status: OperationStatus;
  reason?: TerminalReason;
  /** `token_limit` / `tool_limit`: the limit that ended them (F4, F5), e.g. `maxToolCalls`. */
  limit?: string;
  count: number;
}

/** A place in the list order (newest first): `createdAt`, then `id`, both descending. */
export interface OperationListPosition {
  createdAt: string;
  id: string;
}

/** `GET /v1/operations` (DESIGN §7): which operations, and from where. */
export interface OperationListQuery {
  /** Only this owner's; absent only for the keyless loopback server, whose one local user sees all. */
  ownerId?: string;
  status?: OperationStatus;
  agentId?: string;
  /** Only these operations (the caller-wide event stream reads the ones its events named). */
  ids?: readonly string[];
  /** Only operations strictly after this place in the order (the previous page's last item). */
  after?: OperationListPosition;
  /** At most this many rows. */
  limit: number;
}

/** One row of the list: the operation's own columns, never its run context, messages or tool calls. */
export interface OperationSummary {
  id: string;
  agentId: string;
  ownerId?: string;
  status: OperationStatus;
  reason?: TerminalReason;
  /** Finished steps (the operation's step index). */
  steps: number;
  usage: UsageTotals;
  createdAt: string;
  updatedAt: string;
}

export interface OperationReadPort {
  /** The operation, or null when there is none. */
  operation(operationId: string): Promise<StoredOperation | null>;
  /** Its items waiting for a decision or a deferred result, in step then call order. */
  pendingInterventions(operationId: string): Promise<StoredIntervention[]>;
  /** Operations newest first (`createdAt`, then `id`, descending), one keyset page. */
  listOperations(query: OperationListQuery): Promise<OperationSummary[]>;
  /** Published messages in `seq` order, only those after `afterSeq` when given. */
  messages(operationId: string, afterSeq?: number): Promise<StoredMessage[]>;
  /** The timeline, oldest first; outcomes this process still buffers are written first, so a finished run shows whole. */
  timeline(operationId: string): Promise<TimelineRow[]>;
  /**
   * Operations by status and terminal reason, in one read; undefined while the database is not open (a
   * scrape never opens it: a hooks-only app has none, and shutdown must not reopen it). Rejects when the read fails.
   */
  operationCounts(): Promise<OperationCount[] | undefined>;
}

export const OPERATION_READER = Symbol('nest-agent-hooks:OperationReadPort');
