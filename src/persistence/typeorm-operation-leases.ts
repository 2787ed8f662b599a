/**
 * The runtime's `OperationLeases` port over the lease store of the runtime's database (`RuntimeStores.leases`).
 * A lease taken here tells the step-state cache what its UPDATE found, so the steps under it begin without
 * reading the operation again (`StepStateStore.leased`).
 */
import { Injectable } from '@nestjs/common';
import type { OperationLeases, RecoverableOperation, ReleasedOperation } from '../runtime/operation-leases.port.js';
import type { StoredOperation } from '../runtime/runtime-store.port.js';
import type { OperationLeaseStore } from './operation-lease.store.js';
import { RuntimeDatabase } from './runtime-database.js';

@Injectable()
export class TypeOrmOperationLeases implements OperationLeases {
  constructor(private readonly database: RuntimeDatabase) {}

  async acquire(operationId: string, owner: string, ttlMs: number): Promise<StoredOperation | null> {
    const { leases, stepStates, operations, callerHooks } = await this.database.stores();
    const known = stepStates.knownState(operationId);
    const lease = await leases.acquire(operationId, owner, ttlMs, known);
    if (!lease) return null;
    if (lease.operation) {
      stepStates.leased(lease.operation, lease.messageSeq, owner, lease.messages);
      if (lease.hasCallerHooks === false) callerHooks.rememberNone(operationId);
      return lease.operation;
    }
    // Still the state cached here: only the lease moved. (Gone from the cache meanwhile: read, unmarked.)
    return stepStates.leasedAsCached(operationId, lease, owner) ?? (await operations.get(operationId));
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
