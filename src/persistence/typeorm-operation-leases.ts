/** The runtime's `OperationLeases` port over the lease store of the runtime's database (`RuntimeStores.leases`). */
import { Injectable } from '@nestjs/common';
import type { OperationLeases, RecoverableOperation } from '../runtime/operation-leases.port.js';
import type { OperationLeaseStore } from './operation-lease.store.js';
import { RuntimeDatabase } from './runtime-database.js';

@Injectable()
export class TypeOrmOperationLeases implements OperationLeases {
  constructor(private readonly database: RuntimeDatabase) {}

  async acquire(operationId: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await (await this.leases()).acquire(operationId, owner, ttlMs)) !== null;
  }

  async renew(operationId: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await (await this.leases()).renew(operationId, owner, ttlMs)) !== null;
  }

  async release(operationId: string, owner: string): Promise<boolean> {
    return (await this.leases()).release(operationId, owner);
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
