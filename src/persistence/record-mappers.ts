/** Entity rows → the plain records of `records.ts` (`null` columns become absent fields). */
import type { HookOutcomeEntity } from './entities/hook-outcome.entity.js';
import type { InterventionEntity } from './entities/intervention.entity.js';
import type { MessageEntity } from './entities/message.entity.js';
import type { OperationCallerHookEntity } from './entities/operation-caller-hook.entity.js';
import type { OperationEntity } from './entities/operation.entity.js';
import type { ToolResultPlaceholderEntity } from './entities/tool-result-placeholder.entity.js';
import type {
  CallerHookRecord,
  HookOutcomeRow,
  InterventionRecord,
  MessageRecord,
  OperationRecord,
  PlaceholderRecord,
} from './records.js';
import type { HookPoint } from '../hooks/hook-points.js';

/** Copies the non-null values of `fields` from `row` onto `target`. */
function optional<T extends object, K extends keyof T>(target: Partial<T>, row: { [P in K]?: T[P] | null }, fields: readonly K[]): void {
  for (const field of fields) {
    const value = row[field];
    if (value !== null && value !== undefined) target[field] = value as T[K];
  }
}

export function toOperationRecord(row: OperationEntity): OperationRecord {
  const record: OperationRecord = {
    id: row.id,
    agentId: row.agentId,
    status: row.status,
    stepIndex: row.stepIndex,
    runContext: row.runContext ?? {},
    usage: { inputTokens: row.inputTokens, outputTokens: row.outputTokens, costUsd: row.costUsd },
    version: row.version,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
  optional(
    record,
    row,
    ['parentOperationId', 'threadId', 'parentToolCallId', 'ownerId', 'reason', 'errorType', 'errorMessage', 'errorSummary', 'idempotencyKey', 'idempotencyDigest', 'leaseOwner', 'leaseUntil', 'completedAt'],
  );
  if (row.clientTools !== null && row.clientTools !== undefined && row.clientTools.length > 0) record.clientTools = row.clientTools;
  if (row.traceContext !== null && row.traceContext !== undefined) record.traceContext = row.traceContext;
  if (row.compactionGroupId !== null && row.compactionSummary !== null && row.compactedThroughSeq !== null) {
    record.compaction = { groupId: row.compactionGroupId, summary: row.compactionSummary, throughSeq: row.compactedThroughSeq };
  }
  return record;
}

export function toCallerHookRecord(row: OperationCallerHookEntity): CallerHookRecord {
  const record: CallerHookRecord = { position: row.position, hookId: row.hookId, type: row.type, webhook: row.webhook };
  if (row.matcher !== null) record.matcher = row.matcher;
  return record;
}

export function toMessageRecord(row: MessageEntity): MessageRecord {
  const record: MessageRecord = {
    id: row.id,
    operationId: row.operationId,
    seq: row.seq,
    role: row.role,
    content: row.content,
    createdAt: row.createdAt,
  };
  optional(record, row, [
    'toolCalls',
    'toolCallId',
    'identifier',
    'apiName',
    'error',
    'state',
    'success',
  ]);
  return record;
}

export function toInterventionRecord(row: InterventionEntity): InterventionRecord {
  const record: InterventionRecord = {
    operationId: row.operationId,
    toolCallId: row.toolCallId,
    stepIndex: row.stepIndex,
    callIndex: row.callIndex,
    identifier: row.identifier,
    apiName: row.apiName,
    args: row.args,
    kind: row.kind,
    status: row.status,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
  optional(
    record,
    row,
    ['claimedBy', 'claimedAt', 'decision', 'decisionReason', 'decidedBy', 'decidedAt', 'reply'],
  );
  // F6: an approval's reply holds the arguments it was approved with, when a human edited them.
  const edited = row.kind === 'approval' && row.reply !== null && typeof row.reply === 'object' ? (row.reply as { args?: unknown }).args : undefined;
  if (edited !== null && typeof edited === 'object' && !Array.isArray(edited)) record.editedArgs = edited as Record<string, unknown>;
  return record;
}

export function toPlaceholderRecord(row: ToolResultPlaceholderEntity): PlaceholderRecord {
  const record: PlaceholderRecord = {
    operationId: row.operationId,
    toolCallId: row.toolCallId,
    state: row.state,
    createdAt: row.createdAt,
  };
  optional(record, row, ['result', 'finalizedAt', 'receivedAt']);
  if (row.receivedResult !== null && row.receivedResult !== undefined) record.received = row.receivedResult;
  return record;
}

export function toHookOutcomeRow(row: HookOutcomeEntity): HookOutcomeRow {
  const record: HookOutcomeRow = {
    // The timeline's seq counts within the operation (DESIGN §7); 0 only on a row of an older version.
    seq: row.operationSeq ?? 0,
    operationId: row.operationId,
    at: row.at,
    point: row.point as HookPoint,
    hookId: row.hookId,
    source: row.source,
    outcome: row.outcome,
    latencyMs: row.latencyMs,
  };
  if (row.errorCode !== null) record.errorCode = row.errorCode;
  if (row.toolCallId !== null) record.toolCallId = row.toolCallId;
  return record;
}
