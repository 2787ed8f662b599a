/**
 * The operation as the runtime and its store speak of it (`RuntimeStore`, runtime-store.port.ts): the
 * operation row, its conversation, its caller hooks, what a step's commit may change and what the terminal
 * transition records. Never a secret (DESIGN §5).
 */
import type { AgentHookWebhook } from '../hooks/agent-hook.js';
import type { TerminalReason, UsageTotals } from '../hooks/agent-events.js';
import type { ModelToolCall } from './models/chat-model.js';
import type { ClientToolDeclaration } from './tools/client-tools.js';

export type OperationStatus = 'running' | 'waiting' | 'completed';

/** The run context as stored: never a secret (DESIGN §5). */
export interface StoredRunContext {
  userId?: string;
  organizationId?: string;
  scopes?: string[];
  metadata?: Record<string, unknown>;
}

/** The latest compaction: the summary stands in for every message up to `throughSeq`. */
export interface StoredCompaction {
  groupId: string;
  summary: string;
  throughSeq: number;
}

export interface StoredOperation {
  id: string;
  parentOperationId?: string;
  /** A sub-agent's thread (V1). */
  threadId?: string;
  /** The parent's `agents/call` tool call this operation answers (P5). */
  parentToolCallId?: string;
  compaction?: StoredCompaction;
  agentId: string;
  ownerId?: string;
  status: OperationStatus;
  reason?: TerminalReason;
  stepIndex: number;
  runContext: StoredRunContext;
  usage: UsageTotals;
  errorType?: string;
  errorMessage?: string;
  /** A safe summary of the error (DESIGN §7): our own fields only (model id, HTTP status, a variable's name). */
  errorSummary?: string;
  /** Queue mode: the worker running the current step, while its lease lasts. */
  leaseOwner?: string;
  /** The digest of the request that created it under an idempotency key (G8), when one was given. */
  idempotencyDigest?: string;
  /** The client tools its caller declared (`execAgent({ clientTools })`), validated before they were stored. */
  clientTools?: ClientToolDeclaration[];
  /** SPEC O3: the W3C trace context of its `invoke_agent` span, when a tracer recorded one. */
  traceContext?: StoredTraceContext;
  version: number;
}

/**
 * What the terminal transition records of why the operation ended: an error's type and safe summary (S3),
 * or a reached limit (run-limits.ts: its JSON in `message`, our own fields only).
 */
export interface TerminalFailure {
  type?: string;
  summary?: string;
  message?: string;
}

/** What a step's commit may change on the operation; the terminal transition is `complete`, never a patch. */
export interface StepPatch {
  stepIndex?: number;
  /** Totals so far (not increments): the version check makes a read-modify-write safe. */
  usage?: UsageTotals;
  status?: Exclude<OperationStatus, 'completed'>;
  runContext?: StoredRunContext;
  /** The latest compaction of the conversation (replaces an earlier one). */
  compaction?: StoredCompaction;
  /**
   * The commit also lets its `leaseOwner`'s lease go, in the same statement (queue mode: a step's last
   * commit when its next step is another job). Only with a `leaseOwner`.
   */
  releaseLease?: boolean;
}

export interface CommitOptions {
  /**
   * The hook timeline recorded so far is durable no later than this commit — in the commit's own transaction
   * where the store can (SQLite), else flushed before it — so a process killed right after the commit leaves
   * no published result without the timeline of the hooks that decided it.
   */
  timelineFirst?: boolean;
}

/** A caller hook as persisted: the webhook part only, templates kept (W3, L2). */
export interface StoredCallerHook {
  position: number;
  hookId: string;
  type: string;
  matcher?: string;
  webhook: AgentHookWebhook;
}

export type MessageRole = 'user' | 'assistant' | 'tool';
export type ToolMessageError = 'hook_denied' | 'hook_control_error';

export interface StoredMessage {
  id: string;
  seq: number;
  role: MessageRole;
  content: string;
  toolCalls?: ModelToolCall[];
  toolCallId?: string;
  identifier?: string;
  apiName?: string;
  error?: ToolMessageError;
  state?: Record<string, unknown>;
  /** A tool message's outcome (`afterStep` `toolResults[].success`); absent on rows written before it. */
  success?: boolean;
}

/** A message to append; `seq` is always assigned by the store, `id` generated when absent. */
export type NewMessage = Omit<StoredMessage, 'id' | 'seq'> & { id?: string };

export interface NewOperation {
  id: string;
  agentId: string;
  ownerId?: string;
  parentOperationId?: string;
  threadId?: string;
  parentToolCallId?: string;
  prompt: string;
  runContext: StoredRunContext;
  callerHooks: StoredCallerHook[];
  idempotencyKey?: string;
  /** With `idempotencyKey`: a digest of the request, stored so a retry with another request is refused (G8). */
  idempotencyDigest?: string;
  clientTools?: ClientToolDeclaration[];
  traceContext?: StoredTraceContext;
  /**
   * Local mode: the creating process drives the operation at once, so it is created with the process's
   * lease already held (`owner` until now + `ttlMs`), the same row and statement, instead of a second
   * statement taking it right after: one statement less on the path of every local run.
   */
  lease?: NewOperationLease;
}

/** The lease a new operation is created with (`NewOperation.lease`). */
export interface NewOperationLease {
  owner: string;
  ttlMs: number;
}

/** W3C trace context, as stored with an operation (SPEC O3): no baggage, nothing secret. */
export interface StoredTraceContext {
  traceparent: string;
  tracestate?: string;
}

/** Who runs the terminal sequence after the transition, and for how long before a reconciler may take it over. */
export interface TerminalHold {
  owner: string;
  ms: number;
  /**
   * A step's own end: the transition happens only while this lease owner still holds the operation, so a
   * process whose lease was taken over cannot end an operation another process now drives (G2).
   */
  leaseOwner?: string;
  /**
   * Nothing in the completing process observes the terminal points (no hook of any family, no subscriber):
   * an operation with no parent to report to (P5) is recorded with its terminal sequence done in the
   * transition's own statement — no hold, no later mark, nothing a reconciler would run (E3).
   */
  nothingOwed?: boolean;
}

/** A tool message to append: its call id is known. */
export type ToolMessage = NewMessage & { role: 'tool'; toolCallId: string };
