/** The runtime's `RuntimeStore` port over the TypeORM stores. */
import { Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { TerminalReason, ToolResult } from '../hooks/agent-events.js';
import type {
  DecisionOutcome,
  DeferredPublishOutcome,
  InterventionAction,
  NewMessage,
  NewOperation,
  NewStoredIntervention,
  RuntimeStore,
  StoredCallerHook,
  StoredIntervention,
  StoredMessage,
  StoredOperation,
  ToolMessage,
} from '../runtime/runtime-store.port.js';
import { InterventionStore } from './intervention.store.js';
import { OperationWaitStore } from './operation-wait.store.js';
import { RuntimeDatabase } from './runtime-database.js';
import { ToolResultPlaceholderStore } from './tool-result-placeholder.store.js';

/** The Runtime II stores, built once per DataSource (they share its SQLite gate). */
interface WaitStores {
  interventions: InterventionStore;
  waits: OperationWaitStore;
  placeholders: ToolResultPlaceholderStore;
}

@Injectable()
export class TypeOrmRuntimeStore implements RuntimeStore {
  private readonly waitStores = new WeakMap<DataSource, WaitStores>();

  constructor(private readonly database: RuntimeDatabase) {}

  async createOperation(input: NewOperation): Promise<StoredOperation> {
    const { operations } = await this.database.stores();
    return (await operations.create(input)).operation;
  }

  async getOperation(id: string): Promise<StoredOperation | null> {
    return (await this.database.stores()).operations.get(id);
  }

  async callerHooks(operationId: string): Promise<StoredCallerHook[]> {
    return (await this.database.stores()).callerHooks.list(operationId);
  }

  async messages(operationId: string): Promise<StoredMessage[]> {
    return (await this.database.stores()).messages.list(operationId);
  }

  async commit(
    operationId: string,
    expectedVersion: number,
    message: NewMessage | undefined,
    patch: Partial<Pick<StoredOperation, 'stepIndex' | 'usage' | 'status' | 'runContext' | 'compaction'>>,
    leaseOwner?: string,
  ): Promise<{ operation: StoredOperation; message?: StoredMessage }> {
    const { commits } = await this.database.stores();
    const status = patch.status === 'completed' ? undefined : patch.status;
    const result = await commits.commit({
      operationId,
      expectedVersion,
      messages: message ? [message] : [],
      patch: { ...patch, ...(status ? { status } : {}) } as never,
      ...(leaseOwner !== undefined ? { leaseOwner } : {}),
    });
    return { operation: result.operation, ...(result.messages[0] ? { message: result.messages[0] } : {}) };
  }

  async complete(operationId: string, reason: TerminalReason, error?: { type: string; message?: string }): Promise<boolean> {
    return (await this.database.stores()).operations.complete(operationId, reason, error);
  }

  async markTerminalHooksDone(operationId: string): Promise<void> {
    await (await this.database.stores()).operations.markTerminalHooksDone(operationId);
  }

  async claimOwedTerminalHooks(owner: string, holdMs: number): Promise<StoredOperation[]> {
    return (await this.database.stores()).operations.claimOwedTerminalHooks(owner, holdMs);
  }

  async flushTimeline(): Promise<void> {
    await this.database.current?.timeline.flush();
  }

  async interventions(operationId: string): Promise<StoredIntervention[]> {
    const { interventions } = await this.wait();
    return (await interventions.list(operationId)).map(
      ({ toolCallId, stepIndex, callIndex, identifier, apiName, args, kind, status, decision, decisionReason, claimedBy }) => ({
        toolCallId,
        stepIndex,
        callIndex,
        identifier,
        apiName,
        args,
        kind,
        status,
        ...(decision ? { decision } : {}),
        ...(decisionReason !== undefined ? { decisionReason } : {}),
        ...(claimedBy ? { claimedBy } : {}),
      }),
    );
  }

  async recordInterventions(operationId: string, items: readonly NewStoredIntervention[]): Promise<void> {
    await (await this.wait()).waits.record(operationId, items);
  }

  async pause(operationId: string): Promise<boolean> {
    return (await this.wait()).waits.pause(operationId);
  }

  async resume(operationId: string): Promise<boolean> {
    return (await this.wait()).waits.resume(operationId);
  }

  async decide(operationId: string, toolCallId: string, decision: { action: InterventionAction; reason?: string; decidedBy?: string }): Promise<DecisionOutcome> {
    return (await this.wait()).waits.decide(operationId, toolCallId, decision);
  }

  async claim(operationId: string, toolCallId: string, claimant: string): Promise<boolean> {
    return (await this.wait()).interventions.claim(operationId, toolCallId, claimant);
  }

  async placeholderState(operationId: string, toolCallId: string): Promise<'empty' | 'final' | null> {
    return (await (await this.wait()).placeholders.get(operationId, toolCallId))?.state ?? null;
  }

  async claimDeferred(operationId: string, toolCallId: string, claimant: string, holdMs: number): Promise<boolean> {
    return (await this.wait()).placeholders.claim(operationId, toolCallId, claimant, holdMs);
  }

  async releaseDeferred(operationId: string, toolCallId: string, claimant: string): Promise<void> {
    await (await this.wait()).placeholders.release(operationId, toolCallId, claimant);
  }

  async publishDeferred(operationId: string, toolCallId: string, result: ToolResult, message: ToolMessage, claimant: string): Promise<DeferredPublishOutcome> {
    const outcome = await (await this.wait()).waits.publishDeferred(operationId, toolCallId, result, message, { claimant });
    if (outcome.published) return 'published';
    return outcome.reason === 'operation_completed' ? 'operation_completed' : 'already_completed';
  }

  private async wait(): Promise<WaitStores> {
    const { dataSource } = await this.database.stores();
    let stores = this.waitStores.get(dataSource);
    if (!stores) {
      stores = {
        interventions: new InterventionStore(dataSource),
        waits: new OperationWaitStore(dataSource),
        placeholders: new ToolResultPlaceholderStore(dataSource),
      };
      this.waitStores.set(dataSource, stores);
    }
    return stores;
  }
}
