/**
 * The response shapes of DESIGN §7, built field by field from what the read port answers: only the fields
 * the contract names, so no internal one (seq, owner, version, run context, tool calls…) ever leaks out.
 */
import type { OperationSummary, TimelineRow } from '../operation-read.port.js';
import { toolCallIdempotencyKey } from '../tools/idempotency-key.js';
import type { InterventionKind, StoredIntervention, StoredMessage, StoredOperation } from '../runtime-store.port.js';

export interface PendingToolView {
  toolCallId: string;
  /** F1: the call's idempotency key, for the outside executor (or approver) to deduplicate on. */
  idempotencyKey: string;
  identifier: string;
  apiName: string;
  args: Record<string, unknown>;
  kind: InterventionKind;
}

export interface OperationView {
  operationId: string;
  agentId: string;
  status: StoredOperation['status'];
  reason?: NonNullable<StoredOperation['reason']>;
  pendingTools?: PendingToolView[];
  usage: { inputTokens: number; outputTokens: number; costUsd: number };
  /** Why it failed (reason `error`): the type and a summary of our own fields, never an error message. */
  error?: { type: string; summary: string };
}

/** One item of `GET /v1/operations`. */
export interface OperationListItemView {
  operationId: string;
  agentId: string;
  status: OperationSummary['status'];
  reason?: NonNullable<OperationSummary['reason']>;
  createdAt: string;
  updatedAt: string;
  steps: number;
  usage: { inputTokens: number; outputTokens: number; costUsd: number };
}

export interface OperationListView {
  items: OperationListItemView[];
  /** Present when more (older) operations may follow: pass it back as `cursor`. */
  nextCursor?: string;
}

export interface MessageView {
  id: string;
  role: StoredMessage['role'];
  content: string;
  toolCallId?: string;
  identifier?: string;
  apiName?: string;
  error?: NonNullable<StoredMessage['error']>;
  state?: Record<string, unknown>;
}

export interface TimelineItemView {
  seq: number;
  at: string;
  point: TimelineRow['point'];
  hookId: string;
  source: TimelineRow['source'];
  outcome: TimelineRow['outcome'];
  errorCode?: string;
  latencyMs: number;
  /** F1: a tool point's row carries its call's idempotency key (derived here, as for pending items). */
  idempotencyKey?: string;
}

/** `pendingTools` is present while something waits (approval or deferred result), absent otherwise. */
export function operationView(operation: StoredOperation, pending: readonly StoredIntervention[]): OperationView {
  const { usage } = operation;
  const waiting = operation.status !== 'completed' ? pending : [];
  return {
    operationId: operation.id,
    agentId: operation.agentId,
    status: operation.status,
    ...(operation.reason ? { reason: operation.reason } : {}),
    ...(waiting.length > 0
      ? {
          pendingTools: waiting.map(({ toolCallId, identifier, apiName, args, kind }) => ({
            toolCallId,
            idempotencyKey: toolCallIdempotencyKey(operation.id, toolCallId),
            identifier,
            apiName,
            args,
            kind,
          })),
        }
      : {}),
    usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, costUsd: usage.costUsd },
    ...(operation.errorType !== undefined ? { error: operationError(operation.errorType, operation.errorSummary) } : {}),
  };
}

/** A list item: the contract's fields only (no owner id: the caller knows whose they are). */
export function operationListItemView(summary: OperationSummary): OperationListItemView {
  const { usage } = summary;
  return {
    operationId: summary.id,
    agentId: summary.agentId,
    status: summary.status,
    ...(summary.reason ? { reason: summary.reason } : {}),
    createdAt: summary.createdAt,
    updatedAt: summary.updatedAt,
    steps: summary.steps,
    usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, costUsd: usage.costUsd },
  };
}

/** An operation failed before summaries were stored: its type says what is known. */
export function operationError(type: string, summary: string | undefined): { type: string; summary: string } {
  return { type, summary: summary ?? `the operation failed with ${type}` };
}

/** A message exactly as published: its verdict (`error`, `state.hookVerdict`) included, nothing internal. */
export function messageView(message: StoredMessage): MessageView {
  return {
    id: message.id,
    role: message.role,
    content: message.content,
    ...(message.toolCallId !== undefined ? { toolCallId: message.toolCallId } : {}),
    ...(message.identifier !== undefined ? { identifier: message.identifier } : {}),
    ...(message.apiName !== undefined ? { apiName: message.apiName } : {}),
    ...(message.error !== undefined ? { error: message.error } : {}),
    ...(message.state !== undefined ? { state: message.state } : {}),
  };
}

export function timelineItemView(row: TimelineRow): TimelineItemView {
  return {
    seq: row.seq,
    at: row.at,
    point: row.point,
    hookId: row.hookId,
    source: row.source,
    outcome: row.outcome,
    ...(row.errorCode !== undefined ? { errorCode: row.errorCode } : {}),
    latencyMs: row.latencyMs,
    ...(row.toolCallId !== undefined ? { idempotencyKey: toolCallIdempotencyKey(row.operationId, row.toolCallId) } : {}),
  };
}
