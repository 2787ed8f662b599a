/**
 * The runtime's `RuntimeStore` port over the stores of the runtime's database (`RuntimeDatabase.stores()`).
 * The stores' records extend the port's shapes (`records.ts`), so they are handed back as they are.
 * "Not found" is one type at the port: the persistence room's `OperationNotFoundError` is mapped here to
 * the runtime's `UnknownOperationError`, so the runtime never sees the other.
 */
import { Injectable } from '@nestjs/common';
import type { TerminalReason, ToolResult } from '../hooks/agent-events.js';
import type {
  CommitOptions,
  DecisionEffects,
  DeferredPublishOutcome,
  DurableDecision,
  DurableDeferredPublish,
  InterventionDecision,
  NewMessage,
  NewOperation,
  NewStoredIntervention,
  OwedNotification,
  PlaceholderState,
  ReceivedDeferredResult,
  RuntimeStore,
  StoredCallerHook,
  StoredIntervention,
  StoredMessage,
  StoredOperation,
  StepPatch,
  TerminalFailure,
  TerminalHold,
  ToolMessage,
} from '../runtime/runtime-store.port.js';
import { UnknownOperationError } from '../runtime/runtime-errors.js';
import type { PublishDeferredResult } from './operation-wait.store.js';
import { OperationNotFoundError } from './persistence-errors.js';
import type { NewHookOutcome } from './records.js';
import { RuntimeDatabase } from './runtime-database.js';
import type { StepCommitResult } from './step-commit.store.js';

@Injectable()
export class SqlRuntimeStore implements RuntimeStore {
  constructor(private readonly database: RuntimeDatabase) {}

  async createOperation(input: NewOperation): Promise<StoredOperation> {
    const { operations, stepStates, callerHooks } = await this.database.stores();
    const created = await operations.create(input);
    if (created.created) {
      // Created under the lease: its first step begins from this row as from the row a lease's UPDATE returned.
      if (created.messages) stepStates.created(created.operation, created.messages, input.lease?.owner);
      if ((input.callerHooks ?? []).length === 0) callerHooks.rememberNone(created.operation.id);
    }
    return created.operation;
  }

  async getOperation(id: string): Promise<StoredOperation | null> {
    return (await this.database.stores()).operations.get(id);
  }

  async completedAmong(operationIds: readonly string[]): Promise<string[]> {
    if (operationIds.length === 0) return [];
    return (await this.database.stores()).operations.completedAmong(operationIds);
  }

  /** Every step of a process that did not register them asks: "none" is remembered instead of read each time (`CallerHookStore`). */
  async callerHooks(operationId: string): Promise<StoredCallerHook[]> {
    return (await this.database.stores()).callerHooks.list(operationId);
  }

  async stepState(operationId: string, leaseOwner?: string): Promise<{ operation: StoredOperation; messages: StoredMessage[] } | null> {
    return (await this.database.stores()).stepStates.read(operationId, leaseOwner);
  }

  async messages(operationId: string): Promise<StoredMessage[]> {
    return (await this.database.stores()).messages.list(operationId);
  }

  async commit(
    operationId: string,
    expectedVersion: number,
    message: NewMessage | undefined,
    patch: StepPatch,
    leaseOwner?: string,
    options: CommitOptions = {},
  ): Promise<{ operation: StoredOperation; message?: StoredMessage }> {
    const { commits, stepStates, timeline } = await this.database.stores();
    const base = stepStates.known(operationId, expectedVersion);
    const commit = (rows: readonly NewHookOutcome[]) =>
      commits.commit({
        operationId,
        expectedVersion,
        messages: message ? [message] : [],
        patch,
        ...(leaseOwner !== undefined ? { leaseOwner } : {}),
        ...(base ? { base } : {}),
        ...(rows.length > 0 ? { timeline: rows } : {}),
      });
    // The timeline durable no later than this commit: on SQLite what it has buffered goes in the commit's own
    // transaction (one instead of two), elsewhere it is flushed first. Other commits leave it to batch on:
    // every transaction that carries timeline rows rewrites the pages of its table and indexes.
    let committing: Promise<StepCommitResult>;
    if (!options.timelineFirst) committing = commit([]);
    else if (commits.writesTimeline) committing = timeline.writeWith(commit);
    else committing = timeline.flush().then(() => commit([]));
    const result = await notFoundAsUnknown(committing).catch((error: unknown) => {
      stepStates.forget(operationId);
      throw error;
    });
    stepStates.committed(operationId, expectedVersion, result, leaseOwner);
    return { operation: result.operation, ...(result.messages[0] ? { message: result.messages[0] } : {}) };
  }

  async complete(operationId: string, reason: TerminalReason, error?: TerminalFailure, hold?: TerminalHold): Promise<boolean> {
    const { operations, stepStates } = await this.database.stores();
    const completed = await operations.completeReturning(operationId, reason, error, hold).catch((failure: unknown) => {
      stepStates.forget(operationId);
      throw failure;
    });
    // No step follows. What the terminal sequence begins from (`completedState`), as the transition returned it.
    if (completed?.row) stepStates.completed(completed.row.operation, completed.row.messageSeq);
    else stepStates.forget(operationId);
    return completed !== null;
  }

  async completedState(operationId: string): Promise<{ operation: StoredOperation | null; messages: StoredMessage[] }> {
    const kept = (await this.database.stores()).stepStates.takeCompleted(operationId);
    return { operation: kept ? kept.operation : await this.getOperation(operationId), messages: kept?.messages ?? (await this.messages(operationId)) };
  }

  async markTerminalHooksDone(operationId: string): Promise<void> {
    await (await this.database.stores()).operations.markTerminalHooksDone(operationId);
  }

  async claimOwedTerminalHooks(owner: string, holdMs: number, limit?: number): Promise<StoredOperation[]> {
    return (await this.database.stores()).operations.claimOwedTerminalHooks(owner, holdMs, limit);
  }

  async flushTimeline(): Promise<void> {
    await this.database.current?.timeline.flush();
  }

  async interventions(operationId: string): Promise<StoredIntervention[]> {
    return (await this.database.stores()).interventions.list(operationId);
  }

  async recordInterventions(operationId: string, items: readonly NewStoredIntervention[]): Promise<void> {
    await notFoundAsUnknown((await this.database.stores()).waits.record(operationId, items));
  }

  async pause(operationId: string): Promise<boolean> {
    const { waits, stepStates } = await this.database.stores();
    stepStates.forget(operationId); // it may wait long, and resume anywhere
    return notFoundAsUnknown(waits.pause(operationId));
  }

  async claim(operationId: string, toolCallId: string, claimant: string): Promise<boolean> {
    return (await this.database.stores()).interventions.claim(operationId, toolCallId, claimant);
  }

  async placeholderState(operationId: string, toolCallId: string): Promise<PlaceholderState | null> {
    return (await (await this.database.stores()).placeholders.get(operationId, toolCallId))?.state ?? null;
  }

  async claimDeferred(operationId: string, toolCallId: string, claimant: string, holdMs: number, received?: ToolResult): Promise<boolean> {
    return (await this.database.stores()).placeholders.claim(operationId, toolCallId, claimant, holdMs, received);
  }

  async releaseDeferred(operationId: string, toolCallId: string, claimant: string): Promise<void> {
    await (await this.database.stores()).placeholders.release(operationId, toolCallId, claimant);
  }

  async claimReceivedDeferred(claimant: string, holdMs: number, limit?: number): Promise<ReceivedDeferredResult[]> {
    return (await this.database.stores()).placeholders.claimReceived(claimant, holdMs, limit);
  }

  async decideDurably(
    operationId: string,
    toolCallId: string,
    decision: InterventionDecision,
    effects: DecisionEffects,
  ): Promise<DurableDecision> {
    return notFoundAsUnknown((await this.database.stores()).waits.decideDurably(operationId, toolCallId, decision, effects));
  }

  async publishDeferredDurably(operationId: string, toolCallId: string, result: ToolResult, message: ToolMessage, claimant: string): Promise<DurableDeferredPublish> {
    const outcome = await notFoundAsUnknown((await this.database.stores()).waits.publishDeferred(operationId, toolCallId, result, message, { claimant }));
    return outcome.published ? { outcome: 'published', resumed: outcome.resumed, message: outcome.message } : { outcome: deferredOutcome(outcome), resumed: false };
  }

  async claimOwedNotifications(owner: string, holdMs: number, limit?: number): Promise<OwedNotification[]> {
    return (await this.database.stores()).owed.claimOwed(owner, holdMs, limit);
  }

  async markNotificationDelivered(id: string): Promise<void> {
    await (await this.database.stores()).owed.markDelivered(id);
  }

  async releaseNotification(id: string, owner: string): Promise<void> {
    await (await this.database.stores()).owed.release(id, owner);
  }

  async renewNotificationClaim(id: string, owner: string, holdMs: number): Promise<boolean> {
    return (await this.database.stores()).owed.renew(id, owner, holdMs);
  }
}

/** The one "not found" the runtime sees (the HTTP API answers it with 404). */
async function notFoundAsUnknown<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw error instanceof OperationNotFoundError ? new UnknownOperationError(error.operationId) : error;
  }
}

function deferredOutcome(outcome: PublishDeferredResult): DeferredPublishOutcome {
  if (outcome.published) return 'published';
  return outcome.reason === 'operation_completed' ? 'operation_completed' : 'already_completed';
}
