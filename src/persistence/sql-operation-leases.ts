/**
 * The runtime's `OperationLeases` port over the lease store of the runtime's database (`RuntimeStores.leases`).
 * A lease taken here tells the step-state cache what its UPDATE found, so the steps under it begin without
 * reading the operation again (`StepStateStore.leased`).
 */
import { Injectable } from '@nestjs/common';
import type { OperationLeases, RecoverableOperation, ReleasedOperation } from '../runtime/operation-leases.port.js';
import type { StoredOperation } from '../runtime/runtime-store.port.js';
import type { AcquiredLease, OperationLeaseStore } from './operation-lease.store.js';
import type { RuntimeStores } from './runtime-stores.js';
import { RuntimeDatabase } from './runtime-database.js';

@Injectable()
export class SqlOperationLeases implements OperationLeases {
  constructor(private readonly database: RuntimeDatabase) {}

  async acquire(operationId: string, owner: string, ttlMs: number, stepFollows = true): Promise<StoredOperation | null> {
    const stores = await this.database.stores();
    const known = stepFollows ? stores.stepStates.knownState(operationId) : undefined;
    const lease = await stores.leases.acquire(operationId, owner, ttlMs, known);
    if (!lease) return null;
    try {
      return await this.answer(stores, lease, owner, stepFollows);
    } catch (error) {
      // Taken, but nobody will hold it: let it go now rather than leave the operation busy for a whole lease.
      await stores.leases.letGo(operationId, owner).catch(() => null);
      throw error;
    }
  }

  /** The operation the lease's statement found (marked for the step that follows, unless `stepFollows` is false). */
  private async answer(stores: RuntimeStores, lease: AcquiredLease, owner: string, stepFollows: boolean): Promise<StoredOperation | null> {
    const { stepStates, operations, callerHooks } = stores;
    // Not marked for the step: what happens before it (a cancel, say) must be seen by its own read.
    if (!stepFollows) return lease.operation ?? (await operations.get(lease.operationId));
    if (lease.operation) {
      stepStates.leased(lease.operation, lease.messageSeq, owner, lease.messages, lease.messagesAfter);
      if (lease.hasCallerHooks === false) callerHooks.rememberNone(lease.operationId);
      return lease.operation;
    }
    // Still the state cached here: only the lease moved. (Gone from the cache meanwhile: read, unmarked.)
    return stepStates.leasedAsCached(lease.operationId, lease, owner) ?? (await operations.get(lease.operationId));
  }

  async renew(operationId: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await (await this.leases()).renew(operationId, owner, ttlMs)) !== null;
  }

  async release(operationId: string, owner: string): Promise<ReleasedOperation | null> {
    return (await this.leases()).letGo(operationId, owner);
  }

  async handBack(operationId: string, owner: string): Promise<boolean> {
    return (await this.leases()).handBack(operationId, owner);
  }

  async listRecoverable(quietSince: string, limit: number): Promise<RecoverableOperation[]> {
    return (await (await this.leases()).listRecoverable(quietSince, limit)).map(({ id, version }) => ({ id, version }));
  }

  mayHoldWork(): boolean {
    return this.database.mayHoldWork();
  }

  async renewTerminalHold(operationId: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.database.stores()).operations.renewTerminalHold(operationId, owner, ttlMs);
  }

  private async leases(): Promise<OperationLeaseStore> {
    return (await this.database.stores()).leases;
  }
}
