/**
 * `agent_hooks_operations`: one row per operation (= run). The database is the source of truth for every
 * step (DESIGN §4), so everything a worker needs to run the next step is here or in the child tables —
 * except secrets, which are never stored (DESIGN §5): the run context is the allow-listed snapshot of
 * `run-context-snapshot.ts`, without `inboundAccessToken`. The prompt lives in the first user message.
 */
import type { StoredTraceContext } from '../../runtime/runtime-store.port.js';
import { Column, Entity, Index, PrimaryColumn, VersionColumn } from 'typeorm';
import type { TerminalReason } from '../../hooks/agent-events.js';
import { doubleColumn, idColumn, integerColumn, jsonColumn, nameColumn, timestampColumn, wordColumn, primaryColumn } from '../columns.js';
import type { OperationStatus, StoredRunContext } from '../records.js';
import type { ClientToolDeclaration } from '../../runtime/tools/client-tools.js';

@Entity({ name: 'agent_hooks_operations' })
// Idempotent creation: one operation per (owner, key). `idempotency_owner` is the owner id, or '' for an
// owner-less operation, and is NULL with the key when no key was given — NULLs never collide in a unique
// index on either database, so operations without a key are unconstrained.
@Index('agent_hooks_operations_idempotency_uq', ['idempotencyOwner', 'idempotencyKey'], { unique: true })
// The retention purge scans completed operations by completion time (running ones are few: the
// reconciler's scan of them needs only the `status` prefix).
@Index('agent_hooks_operations_status_completed_idx', ['status', 'completedAt'])
@Index('agent_hooks_operations_parent_idx', ['parentOperationId'])
// `GET /v1/operations`: one owner's operations newest first, by the keyset (created_at, id) (DESIGN §7).
@Index('agent_hooks_operations_owner_created_idx', ['ownerId', 'createdAt', 'id'])
export class OperationEntity {
  @PrimaryColumn(primaryColumn(idColumn, 'id', 'agent_hooks_operations_pk'))
  id!: string;

  @Column(idColumn('parent_operation_id', true))
  parentOperationId!: string | null;

  /** A sub-agent's own thread (V1); null for top-level operations. */
  @Column(idColumn('thread_id', true))
  threadId!: string | null;

  /** The parent's `agents/call` tool call this operation answers (the completion bridge, P5). */
  @Column(nameColumn('parent_tool_call_id', true))
  parentToolCallId!: string | null;

  /** The latest compaction: its group id, summary, and the last message `seq` it replaced. */
  @Column(idColumn('compaction_group_id', true))
  compactionGroupId!: string | null;

  @Column({ name: 'compaction_summary', type: 'text', nullable: true })
  compactionSummary!: string | null;

  @Column({ name: 'compacted_through_seq', type: 'integer', nullable: true })
  compactedThroughSeq!: number | null;

  @Column(nameColumn('agent_id'))
  agentId!: string;

  @Column(nameColumn('owner_id', true))
  ownerId!: string | null;

  @Column(wordColumn('status'))
  status!: OperationStatus;

  @Column(wordColumn('reason', true))
  reason!: TerminalReason | null;

  @Column(integerColumn('step_index'))
  stepIndex!: number;

  /** The `seq` of the operation's last message: appends bump it in the statement that holds the row. */
  @Column({ ...integerColumn('message_seq'), default: 0 })
  messageSeq!: number;

  @Column(jsonColumn('run_context'))
  runContext!: StoredRunContext;

  @Column(integerColumn('input_tokens'))
  inputTokens!: number;

  @Column(integerColumn('output_tokens'))
  outputTokens!: number;

  @Column(doubleColumn('cost_usd'))
  costUsd!: number;

  @Column(nameColumn('error_type', true))
  errorType!: string | null;

  @Column({ name: 'error_message', type: 'text', nullable: true })
  errorMessage!: string | null;

  /** A safe summary of the error (DESIGN §7): our own fields only, never a provider body or user text. */
  @Column({ name: 'error_summary', type: 'varchar', length: 1024, nullable: true })
  errorSummary!: string | null;

  @Column(nameColumn('idempotency_owner', true))
  idempotencyOwner!: string | null;

  @Column(nameColumn('idempotency_key', true))
  idempotencyKey!: string | null;

  /** SHA-256 (hex) of the request that created it under `idempotency_key` (G8); null without one. */
  @Column({ name: 'idempotency_digest', type: 'varchar', length: 64, nullable: true })
  idempotencyDigest!: string | null;

  /** Optimistic versioning: every state change is `… WHERE version = :expected` and bumps it. */
  @VersionColumn({ name: 'version', type: 'integer' })
  version!: number;

  /** Who runs the current step (a worker's unique holder id); leases never bump `version`. */
  @Column(nameColumn('lease_owner', true))
  leaseOwner!: string | null;

  @Column(timestampColumn('lease_until', true))
  leaseUntil!: string | null;

  @Column(timestampColumn('created_at'))
  createdAt!: string;

  @Column(timestampColumn('updated_at'))
  updatedAt!: string;

  @Column(timestampColumn('completed_at', true))
  completedAt!: string | null;

  /** The client tools its caller declared for this operation (SPEC G1, DESIGN §5); null when none. */
  @Column(jsonColumn('client_tools', true))
  clientTools!: ClientToolDeclaration[] | null;

  /** SPEC O3: the operation's W3C trace context (`traceparent`, `tracestate`), so later steps join its trace. */
  @Column(jsonColumn('trace_context', true))
  traceContext!: StoredTraceContext | null;

  /** When the terminal sequence (hooks, the sub-agent bridge) finished; null while it is owed. */
  @Column(timestampColumn('terminal_hooks_at', true))
  terminalHooksAt!: string | null;
}
