/**
 * Deferred-result placeholders (L4): created `empty` when a deferred call is handed out, finalized once.
 * `finalize` is a compare-and-set (`UPDATE … SET state = 'final' WHERE state = 'empty'`): of any number of
 * concurrent completions, from any processes, exactly one wins and its result is the one kept.
 * Before that, `claim` lets one result at a time run its after-chain (G5): a duplicate that arrives while
 * another is being decided is turned away instead of calling the caller's policy again.
 */
import type { DataSource } from 'typeorm';
import type { ToolResult } from '../hooks/agent-events.js';
import { ToolResultPlaceholderEntity } from './entities/tool-result-placeholder.entity.js';
import { insertValues, updateValues } from './entity-values.js';
import { toPlaceholderRecord } from './record-mappers.js';
import type { PlaceholderRecord } from './records.js';
import { isUniqueViolation } from './sql-errors.js';
import { StoreDatabase } from './store-database.js';
import { nowIso, type StoreOptions } from './store-options.js';

export class ToolResultPlaceholderStore {
  private readonly db: StoreDatabase;

  constructor(
    dataSource: DataSource,
    private readonly options: StoreOptions = {},
  ) {
    this.db = StoreDatabase.for(dataSource);
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
        .set(updateValues<ToolResultPlaceholderEntity>({ state: 'final', result, finalizedAt: nowIso(this.options) }))
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
   * that succeeds when nobody holds it, its claim lapsed, or `claimant` holds it already (a renewal).
   * False while another decider holds it, and once the placeholder is final.
   */
  async claim(operationId: string, toolCallId: string, claimant: string, holdMs: number): Promise<boolean> {
    const now = nowIso(this.options);
    const until = new Date(Date.parse(now) + holdMs).toISOString();
    const outcome = await this.db.run((manager) =>
      manager
        .createQueryBuilder()
        .update(ToolResultPlaceholderEntity)
        .set(updateValues<ToolResultPlaceholderEntity>({ claimedBy: claimant, claimedUntil: until }))
        .where('"operation_id" = :operationId AND "tool_call_id" = :toolCallId AND "state" = :empty', { operationId, toolCallId, empty: 'empty' })
        .andWhere('("claimed_by" IS NULL OR "claimed_by" = :claimant OR "claimed_until" < :now)', { claimant, now })
        .execute(),
    );
    return outcome.affected === 1;
  }

  /** Gives up `claimant`'s claim (its after-chain failed): the next result of the call may be decided. */
  async release(operationId: string, toolCallId: string, claimant: string): Promise<void> {
    await this.db.run((manager) =>
      manager
        .createQueryBuilder()
        .update(ToolResultPlaceholderEntity)
        .set(updateValues<ToolResultPlaceholderEntity>({ claimedBy: null, claimedUntil: null }))
        .where('"operation_id" = :operationId AND "tool_call_id" = :toolCallId AND "claimed_by" = :claimant', { operationId, toolCallId, claimant })
        .execute(),
    );
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
