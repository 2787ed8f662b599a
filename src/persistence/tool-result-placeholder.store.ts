/**
 * Deferred-result placeholders (L4): created `empty` when a deferred call is handed out, finalized once.
 * `finalize` is a compare-and-set (`UPDATE … SET state = 'final' WHERE state = 'empty'`): of any number of
 * concurrent completions, from any processes, exactly one wins and its result is the one kept.
 * Before that, `claim` lets one result at a time run its after-chain (G5): a duplicate that arrives while
 * another is being decided is turned away instead of calling the caller's policy again. The claim stores the
 * result it decides (`received`, SPEC G3) in the same statement: while it is stored, no other result of the
 * call is taken, and if its decider dies during the after-chain, `claimReceived` hands it to a reconciler
 * once the claim lapsed, so a crash never makes a second post necessary. The publish clears it.
 */
import type { ToolResult } from '../hooks/agent-events.js';
import { OperationEntity } from './entities/operation.entity.js';
import { ToolResultPlaceholderEntity } from './entities/tool-result-placeholder.entity.js';
import { insertValues, updateValues } from './entity-values.js';
import { toPlaceholderRecord } from './record-mappers.js';
import type { ReceivedDeferredResult } from '../runtime/runtime-store.port.js';
import type { PlaceholderRecord } from './records.js';
import { isUniqueViolation } from './sql-errors.js';
import type { StoreDatabase } from './store-database.js';
import { nowIso, type StoreOptions } from './store-options.js';

export class ToolResultPlaceholderStore {
  private readonly db: StoreDatabase;

  constructor(
    database: StoreDatabase,
    private readonly options: StoreOptions = {},
  ) {
    this.db = database;
  }

  /** Creates the empty placeholder; false if it already existed (a retried step), which is left as it is. */
  async createEmpty(operationId: string, toolCallId: string): Promise<boolean> {
    const row: ToolResultPlaceholderEntity = {
      operationId,
      toolCallId,
      state: 'empty',
      result: null,
      createdAt: nowIso(this.options),
      finalizedAt: null,
      claimedBy: null,
      claimedUntil: null,
      receivedResult: null,
      receivedAt: null,
    };
    try {
      await this.db.run((manager) =>
        manager.createQueryBuilder().insert().into(ToolResultPlaceholderEntity).values(insertValues(row)).updateEntity(false).execute(),
      );
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  /** Writes the final result if the placeholder is still empty: true for the first writer, false for every later one (and for no placeholder). */
  async finalize(operationId: string, toolCallId: string, result: ToolResult): Promise<boolean> {
    const outcome = await this.db.run((manager) =>
      manager
        .createQueryBuilder()
        .update(ToolResultPlaceholderEntity)
        .set(updateValues<ToolResultPlaceholderEntity>({ state: 'final', result, finalizedAt: nowIso(this.options), receivedResult: null, receivedAt: null }))
        .where('"operation_id" = :operationId AND "tool_call_id" = :toolCallId AND "state" = :empty', {
          operationId,
          toolCallId,
          empty: 'empty',
        })
        .execute(),
    );
    return outcome.affected === 1;
  }

  /**
   * Claims the empty placeholder for `claimant` to run the result's after-chain (G5): a compare-and-set
   * that succeeds when `claimant` holds it already (a renewal), or when nobody holds it (or the claim lapsed)
   * and no received result is stored. With `received`, the same statement stores the result being decided
   * (SPEC G3). False while another decider holds it, while a received result waits (its decider died: only
   * `claimReceived` takes it over), and once the placeholder is final.
   */
  async claim(operationId: string, toolCallId: string, claimant: string, holdMs: number, received?: ToolResult): Promise<boolean> {
    const now = nowIso(this.options);
    const until = new Date(Date.parse(now) + holdMs).toISOString();
    const outcome = await this.db.run((manager) =>
      manager
        .createQueryBuilder()
        .update(ToolResultPlaceholderEntity)
        .set(updateValues<ToolResultPlaceholderEntity>({ claimedBy: claimant, claimedUntil: until, ...(received ? { receivedResult: received, receivedAt: now } : {}) }))
        .where('"operation_id" = :operationId AND "tool_call_id" = :toolCallId AND "state" = :empty', { operationId, toolCallId, empty: 'empty' })
        .andWhere('("claimed_by" = :claimant OR (("claimed_by" IS NULL OR "claimed_until" < :now) AND "received_at" IS NULL))', { claimant, now })
        .execute(),
    );
    return outcome.affected === 1;
  }

  /**
   * Gives up `claimant`'s claim (its after-chain failed, its poster got the failure): the result it stored
   * goes with it, and the next result of the call may be decided.
   */
  async release(operationId: string, toolCallId: string, claimant: string): Promise<void> {
    await this.db.run((manager) =>
      manager
        .createQueryBuilder()
        .update(ToolResultPlaceholderEntity)
        .set(updateValues<ToolResultPlaceholderEntity>({ claimedBy: null, claimedUntil: null, receivedResult: null, receivedAt: null }))
        .where('"operation_id" = :operationId AND "tool_call_id" = :toolCallId AND "claimed_by" = :claimant', { operationId, toolCallId, claimant })
        .execute(),
    );
  }

  /**
   * Received results whose decider is gone (claim free or lapsed), oldest first: up to `limit`, each claimed
   * for `claimant` until now + `holdMs` by a compare-and-set, so of two reconcilers racing for one exactly one
   * gets it. A received result of an operation completed meanwhile is never published (G5): it is dropped.
   */
  async claimReceived(claimant: string, holdMs: number, limit = 50): Promise<ReceivedDeferredResult[]> {
    const now = nowIso(this.options);
    const until = new Date(Date.parse(now) + holdMs).toISOString();
    const scan = (ofCompleted: boolean) =>
      this.db.run((manager) =>
        manager
          .createQueryBuilder(ToolResultPlaceholderEntity, 'placeholder')
          .innerJoin(OperationEntity, 'operation', 'operation.id = placeholder.operationId')
          .where('placeholder.receivedAt IS NOT NULL')
          .andWhere('placeholder.state = :empty', { empty: 'empty' })
          .andWhere('(placeholder.claimedBy IS NULL OR placeholder.claimedUntil < :now)', { now })
          .andWhere(ofCompleted ? 'operation.status = :completed' : 'operation.status <> :completed', { completed: 'completed' })
          .orderBy('placeholder.receivedAt', 'ASC')
          .addOrderBy('placeholder.operationId', 'ASC')
          .addOrderBy('placeholder.toolCallId', 'ASC')
          .limit(Math.max(1, limit))
          .getMany(),
      );
    // Unchanged since the scan, and still nobody's: the compare-and-set of both steps.
    const unchanged = (row: ToolResultPlaceholderEntity) =>
      ({
        condition:
          '"operation_id" = :operationId AND "tool_call_id" = :toolCallId AND "state" = :empty AND "received_at" = :receivedAt AND ("claimed_by" IS NULL OR "claimed_until" < :now)',
        parameters: { operationId: row.operationId, toolCallId: row.toolCallId, empty: 'empty', receivedAt: row.receivedAt, now },
      }) as const;
    for (const row of await scan(true)) {
      const { condition, parameters } = unchanged(row);
      await this.db.run((manager) =>
        manager
          .createQueryBuilder()
          .update(ToolResultPlaceholderEntity)
          .set(updateValues<ToolResultPlaceholderEntity>({ receivedResult: null, receivedAt: null, claimedBy: null, claimedUntil: null }))
          .where(condition, parameters)
          .execute(),
      );
    }
    const claimed: ReceivedDeferredResult[] = [];
    for (const row of await scan(false)) {
      const { condition, parameters } = unchanged(row);
      const outcome = await this.db.run((manager) =>
        manager
          .createQueryBuilder()
          .update(ToolResultPlaceholderEntity)
          .set(updateValues<ToolResultPlaceholderEntity>({ claimedBy: claimant, claimedUntil: until }))
          .where(condition, parameters)
          .execute(),
      );
      if (outcome.affected === 1) claimed.push({ operationId: row.operationId, toolCallId: row.toolCallId, result: row.receivedResult!, receivedAt: row.receivedAt! });
    }
    return claimed;
  }

  async get(operationId: string, toolCallId: string): Promise<PlaceholderRecord | null> {
    const row = await this.db.run((manager) => manager.findOneBy(ToolResultPlaceholderEntity, { operationId, toolCallId }));
    return row ? toPlaceholderRecord(row) : null;
  }

  async list(operationId: string): Promise<PlaceholderRecord[]> {
    const rows = await this.db.run((manager) =>
      manager.find(ToolResultPlaceholderEntity, { where: { operationId }, order: { createdAt: 'ASC', toolCallId: 'ASC' } }),
    );
    return rows.map(toPlaceholderRecord);
  }
}
