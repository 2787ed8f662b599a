/**
 * Owed work (SPEC G3, DESIGN §5): notifications about a committed decision that must still be delivered.
 * The decision's transaction inserts them (`insertOwedNotifications`) already claimed by the decider, so a
 * reconciler leaves them alone while the decider delivers; once that claim lapses — the decider died, or
 * gave up with `release` — `claimOwed` hands them to a reconciler. Delivery is therefore at least once; the
 * event is rebuilt from the intervention every time, so a receiver de-duplicates on its stable webhook-id.
 * Every claim is a compare-and-set on the row, so two reconcilers never deliver one row at once.
 */
import { randomUUID } from 'node:crypto';
import type { InterventionAction, OwedNotification, OwedNotificationPoint } from '../runtime/runtime-store.port.js';
import { OperationEntity } from './entities/operation.entity.js';
import { OwedWorkEntity } from './entities/owed-work.entity.js';
import { updateValues } from './entity-values.js';
import { SqlParams, type SqlExecutor } from './sql-session.js';
import type { StoreDatabase } from './store-database.js';
import { nowIso, type StoreOptions } from './store-options.js';

/** An owed row as the stores hand it back (`null` columns become absent fields): the runtime's `OwedNotification` and its claim. */
export interface OwedWorkRecord extends OwedNotification {
  createdAt: string;
  claimedBy?: string;
  claimedUntil?: string;
  deliveredAt?: string;
}

/** The notifications a decision owes, named by the decider. */
export interface OwedNotifications {
  toolCallId: string;
  action?: InterventionAction;
  points: readonly OwedNotificationPoint[];
  /** The decider, who delivers them first: they are inserted claimed by it until `now + holdMs`. */
  claimant: string;
  holdMs: number;
}

/**
 * Inserts the owed rows inside the caller's transaction (the caller holds the operation's row). A point
 * named twice is owed once.
 */
export async function insertOwedNotifications(
  db: StoreDatabase,
  tx: SqlExecutor,
  operationId: string,
  owed: OwedNotifications,
  now: string,
): Promise<OwedWorkRecord[]> {
  const points = [...new Set(owed.points)];
  if (points.length === 0) return [];
  const until = new Date(Date.parse(now) + owed.holdMs).toISOString();
  const rows = points.map(
    (point): OwedWorkEntity => ({
      id: randomUUID(),
      operationId,
      point,
      toolCallId: owed.toolCallId,
      action: owed.action ?? null,
      createdAt: now,
      claimedBy: owed.claimant,
      claimedUntil: until,
      deliveredAt: null,
      attempts: 1,
    }),
  );
  const params = new SqlParams(tx.dialect === 'postgres');
  await tx.query(db.columns(OwedWorkEntity).insert(rows, params), params.values);
  return rows.map(toOwedWorkRecord);
}

export class OwedWorkStore {
  private readonly db: StoreDatabase;

  constructor(
    database: StoreDatabase,
    private readonly options: StoreOptions = {},
  ) {
    this.db = database;
  }

  /**
   * Undelivered rows whose claim is free or lapsed, oldest first, of operations that exist: each one returned
   * is claimed for `owner` until `now + holdMs` (attempts + 1) by a compare-and-set, so of two reconcilers
   * racing for a row exactly one gets it.
   */
  async claimOwed(owner: string, holdMs: number, limit = 50): Promise<OwedWorkRecord[]> {
    const now = nowIso(this.options);
    const candidates = await this.db.run((manager) =>
      manager
        .createQueryBuilder(OwedWorkEntity, 'owed')
        .innerJoin(OperationEntity, 'operation', 'operation.id = owed.operationId')
        .where('owed.deliveredAt IS NULL')
        .andWhere('(owed.claimedBy IS NULL OR owed.claimedUntil <= :now)', { now })
        .orderBy('owed.createdAt', 'ASC')
        .addOrderBy('owed.id', 'ASC')
        .limit(Math.max(1, limit))
        .getMany(),
    );
    const until = new Date(Date.parse(now) + holdMs).toISOString();
    const claimed: OwedWorkRecord[] = [];
    for (const row of candidates) {
      const result = await this.db.run((manager) =>
        manager
          .createQueryBuilder()
          .update(OwedWorkEntity)
          .set(updateValues<OwedWorkEntity>({ claimedBy: owner, claimedUntil: until, attempts: () => '"attempts" + 1' }))
          .where('"id" = :id AND "delivered_at" IS NULL AND ("claimed_by" IS NULL OR "claimed_until" <= :now)', { id: row.id, now })
          .execute(),
      );
      if (result.affected === 1) claimed.push(toOwedWorkRecord({ ...row, claimedBy: owner, claimedUntil: until, attempts: row.attempts + 1 }));
    }
    return claimed;
  }

  /** The row was delivered (by whoever holds it): it is never claimed again. False if it was delivered already. */
  async markDelivered(id: string): Promise<boolean> {
    const now = nowIso(this.options);
    const result = await this.db.run((manager) =>
      manager
        .createQueryBuilder()
        .update(OwedWorkEntity)
        .set(updateValues<OwedWorkEntity>({ deliveredAt: now, claimedUntil: null }))
        .where('"id" = :id AND "delivered_at" IS NULL', { id })
        .execute(),
    );
    return result.affected === 1;
  }

  /** Extends `owner`'s claim while its delivery runs (a slow webhook); false once it is no longer `owner`'s or delivered. */
  async renew(id: string, owner: string, holdMs: number): Promise<boolean> {
    const until = new Date(Date.parse(nowIso(this.options)) + holdMs).toISOString();
    const result = await this.db.run((manager) =>
      manager
        .createQueryBuilder()
        .update(OwedWorkEntity)
        .set(updateValues<OwedWorkEntity>({ claimedUntil: until }))
        .where('"id" = :id AND "claimed_by" = :owner AND "delivered_at" IS NULL', { id, owner })
        .execute(),
    );
    return result.affected === 1;
  }

  /** `owner` lets go after a failed delivery, so the next pass retries at once; false if it no longer held it. */
  async release(id: string, owner: string): Promise<boolean> {
    const result = await this.db.run((manager) =>
      manager
        .createQueryBuilder()
        .update(OwedWorkEntity)
        .set(updateValues<OwedWorkEntity>({ claimedBy: null, claimedUntil: null }))
        .where('"id" = :id AND "claimed_by" = :owner AND "delivered_at" IS NULL', { id, owner })
        .execute(),
    );
    return result.affected === 1;
  }

  /** Every owed row of the operation, delivered or not, oldest first. */
  async list(operationId: string): Promise<OwedWorkRecord[]> {
    const rows = await this.db.run((manager) =>
      manager.find(OwedWorkEntity, { where: { operationId }, order: { createdAt: 'ASC', id: 'ASC' } }),
    );
    return rows.map(toOwedWorkRecord);
  }
}

export function toOwedWorkRecord(row: OwedWorkEntity): OwedWorkRecord {
  const record: OwedWorkRecord = {
    id: row.id,
    operationId: row.operationId,
    point: row.point,
    toolCallId: row.toolCallId,
    createdAt: row.createdAt,
    attempts: row.attempts,
  };
  if (row.action !== null) record.action = row.action;
  if (row.claimedBy !== null) record.claimedBy = row.claimedBy;
  if (row.claimedUntil !== null) record.claimedUntil = row.claimedUntil;
  if (row.deliveredAt !== null) record.deliveredAt = row.deliveredAt;
  return record;
}
