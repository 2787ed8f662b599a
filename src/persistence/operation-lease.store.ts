/**
 * Leases: one worker at a time runs an operation's step (DESIGN §4). Each call is one conditional UPDATE,
 * so two workers racing for a lease cannot both win. A lease expires on its own (`leaseUntil`), so a
 * killed worker's operation is picked up again; a holder renews while it works and passes its owner id to
 * `StepCommitStore.commit({ leaseOwner })`, which refuses a commit once the lease has moved on.
 * Leases never bump the operation's version: they say who may work, not what the state is.
 *
 * Owner ids must be unique per holder (e.g. `${workerId}:${randomUUID()}` per step attempt): acquiring a
 * lease one already holds succeeds (it renews), so two holders sharing an id would both "hold" it.
 */
import { OperationEntity } from './entities/operation.entity.js';
import { updateValues } from './entity-values.js';
import { toOperationRecord } from './record-mappers.js';
import type { OperationRecord } from './records.js';
import type { StoreDatabase } from './store-database.js';
import type { StoreOptions } from './store-options.js';

export interface Lease {
  operationId: string;
  owner: string;
  /** ISO-8601 expiry. */
  until: string;
}

export class OperationLeaseStore {
  private readonly db: StoreDatabase;

  constructor(
    database: StoreDatabase,
    private readonly options: StoreOptions = {},
  ) {
    this.db = database;
  }

  /** Takes the lease if it is free, expired or already `owner`'s; null if another holder has it or the operation is completed. */
  async acquire(operationId: string, owner: string, ttlMs: number): Promise<Lease | null> {
    const now = this.now();
    const until = new Date(now.getTime() + ttlMs).toISOString();
    const affected = await this.update(
      { leaseOwner: owner, leaseUntil: until },
      '"id" = :operationId AND "status" <> :completed AND ("lease_owner" IS NULL OR "lease_until" <= :now OR "lease_owner" = :owner)',
      { operationId, owner, now: now.toISOString(), completed: 'completed' },
    );
    return affected === 1 ? { operationId, owner, until } : null;
  }

  /** Extends `owner`'s lease; null if it has moved on (stop working: another worker may run the step). */
  async renew(operationId: string, owner: string, ttlMs: number): Promise<Lease | null> {
    const until = new Date(this.now().getTime() + ttlMs).toISOString();
    const affected = await this.update(
      { leaseUntil: until },
      '"id" = :operationId AND "lease_owner" = :owner AND "status" <> :completed',
      { operationId, owner, completed: 'completed' },
    );
    return affected === 1 ? { operationId, owner, until } : null;
  }

  /** Gives the lease up; false if `owner` no longer held it. */
  async release(operationId: string, owner: string): Promise<boolean> {
    const affected = await this.update({ leaseOwner: null, leaseUntil: null }, '"id" = :operationId AND "lease_owner" = :owner', {
      operationId,
      owner,
    });
    return affected === 1;
  }

  /**
   * Gives the lease up so that a reconciler takes the operation over at its next pass: the lease is made
   * expired rather than cleared, since an unleased running operation is left alone until it has been quiet
   * for a while (it may be between two steps). False if `owner` no longer held it.
   */
  async handBack(operationId: string, owner: string): Promise<boolean> {
    const affected = await this.update({ leaseUntil: this.now().toISOString() }, '"id" = :operationId AND "lease_owner" = :owner', { operationId, owner });
    return affected === 1;
  }

  /**
   * Running operations a reconciler takes over: those whose lease expired (their holder died or handed them
   * back), and those nobody ever held that have not changed since `quietSince` (a process died between
   * committing and driving, or between a queue step's commit and its successor's enqueue), oldest first.
   */
  async listRecoverable(quietSince: string, limit = 100): Promise<OperationRecord[]> {
    const now = this.now().toISOString();
    const rows = await this.db.run((manager) =>
      manager
        .createQueryBuilder(OperationEntity, 'operation')
        .where('operation.status = :running', { running: 'running' })
        .andWhere('((operation.leaseOwner IS NULL AND operation.updatedAt <= :quietSince) OR (operation.leaseOwner IS NOT NULL AND operation.leaseUntil <= :now))', { now, quietSince })
        .orderBy('operation.updatedAt', 'ASC')
        .addOrderBy('operation.id', 'ASC')
        .limit(limit)
        .getMany(),
    );
    return rows.map(toOperationRecord);
  }

  private now(): Date {
    return this.options.clock?.() ?? new Date();
  }

  private async update(values: Partial<OperationEntity>, where: string, parameters: Record<string, unknown>): Promise<number> {
    const result = await this.db.run((manager) =>
      manager
        .createQueryBuilder()
        .update(OperationEntity)
        // Setting `version` to itself keeps TypeORM from bumping it, as it does on every UPDATE otherwise.
        .set(updateValues<OperationEntity>({ ...values, version: () => '"version"' }))
        .where(where, parameters)
        .execute(),
    );
    return result.affected ?? 0;
  }
}
