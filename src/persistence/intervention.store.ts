/**
 * Interventions: tool calls waiting for a human decision (`approval`) or an outside executor
 * (`deferred`). Every transition is a compare-and-set, so an API retry, two reviewers clicking at once,
 * or two workers picking up the same approved call each see exactly one winner:
 *   pending ─decide(approve)→ approved ─complete→ completed
 *   pending ─decide(reject | rejectAndContinue)→ rejected
 *   pending (deferred) ─complete→ completed
 * and, orthogonally, one `claim` per call (who executes it). `reply` is private (never in events or logs).
 */
import { InterventionEntity } from './entities/intervention.entity.js';
import { EntityColumns } from './entity-columns.js';
import { insertValues, updateValues } from './entity-values.js';
import { toInterventionRecord } from './record-mappers.js';
import type { InterventionDecision } from '../runtime/runtime-store.port.js';
import type { InterventionRecord, NewIntervention } from './records.js';
import type { StoreDatabase } from './store-database.js';
import { nowIso, type StoreOptions } from './store-options.js';

export type { InterventionDecision } from '../runtime/runtime-store.port.js';

export class InterventionStore {
  private readonly db: StoreDatabase;
  private columns: EntityColumns<InterventionEntity> | undefined;
  private listPendingSql: string | undefined;

  constructor(
    database: StoreDatabase,
    private readonly options: StoreOptions = {},
  ) {
    this.db = database;
  }

  /** Records pending interventions (all or none); a tool call already recorded is a unique violation. */
  async add(operationId: string, interventions: readonly NewIntervention[]): Promise<InterventionRecord[]> {
    if (interventions.length === 0) return [];
    const now = nowIso(this.options);
    const rows = interventions.map(
      (item) => pendingInterventionRow(operationId, item, now),
    );
    // One multi-row INSERT, in a transaction so that on PostgreSQL its NOTIFY commits with it.
    await this.db.transaction(async (manager, events) => {
      await manager
        .createQueryBuilder()
        .insert()
        .into(InterventionEntity)
        .values(rows.map((row) => insertValues(row)))
        .updateEntity(false)
        .execute();
      events.publish({ operationId, kind: 'intervention' });
    });
    return rows.map(toInterventionRecord);
  }

  async get(operationId: string, toolCallId: string): Promise<InterventionRecord | null> {
    const row = await this.db.run((manager) => manager.findOneBy(InterventionEntity, { operationId, toolCallId }));
    return row ? toInterventionRecord(row) : null;
  }

  /** Every intervention of the operation, in step then call order. */
  async list(operationId: string): Promise<InterventionRecord[]> {
    const rows = await this.db.run((manager) =>
      manager.find(InterventionEntity, { where: { operationId }, order: { stepIndex: 'ASC', callIndex: 'ASC' } }),
    );
    return rows.map(toInterventionRecord);
  }

  /** The `pendingTools` of `GET /v1/operations/:id`, in step then call order; plain SQL: read by every such GET of a running operation. */
  async listPending(operationId: string): Promise<InterventionRecord[]> {
    const columns = (this.columns ??= new EntityColumns(this.db.dataSource, InterventionEntity));
    const sql = (this.listPendingSql ??= `SELECT ${columns.names} FROM ${this.db.table('agent_hooks_interventions')} WHERE "operation_id" = $1 AND "status" = 'pending' ORDER BY "step_index" ASC, "call_index" ASC`);
    const { records } = await this.db.query(sql, [operationId]);
    return records.map((raw) => toInterventionRecord(columns.hydrate(raw)));
  }

  /** Decides a pending `approval` once: true for the first decision, false if it was not pending (→ HTTP 409). */
  async decide(operationId: string, toolCallId: string, decision: InterventionDecision): Promise<boolean> {
    return this.transition(
      decisionValues(decision, nowIso(this.options)),
      '"status" = :pending AND "kind" = :approval',
      { operationId, toolCallId, pending: 'pending', approval: 'approval' },
    );
  }

  /** Claims the call for one executor: true for the first claimant while it is pending or approved. */
  async claim(operationId: string, toolCallId: string, claimant: string): Promise<boolean> {
    const now = nowIso(this.options);
    return this.transition(
      { claimedBy: claimant, claimedAt: now, updatedAt: now },
      '"claimed_by" IS NULL AND "status" IN (:...open)',
      { operationId, toolCallId, open: ['pending', 'approved'] },
    );
  }

  /**
   * Completes an approved call or a pending deferred one, once, keeping the private `reply`. An approval
   * that is still pending cannot be completed: it needs its decision first.
   */
  async complete(operationId: string, toolCallId: string, reply?: unknown): Promise<boolean> {
    const now = nowIso(this.options);
    return this.transition(
      { status: 'completed', reply: reply ?? null, updatedAt: now },
      '("status" = :approved OR ("status" = :pending AND "kind" = :deferred))',
      { operationId, toolCallId, approved: 'approved', pending: 'pending', deferred: 'deferred' },
    );
  }

  private async transition(
    values: Partial<InterventionEntity>,
    condition: string,
    parameters: Record<string, unknown>,
  ): Promise<boolean> {
    // A transaction, though one statement: on PostgreSQL its NOTIFY commits with it, or neither does.
    const result = await this.db.transaction(async (manager, events) => {
      const update = await manager
        .createQueryBuilder()
        .update(InterventionEntity)
        .set(updateValues<InterventionEntity>(values))
        .where(`"operation_id" = :operationId AND "tool_call_id" = :toolCallId AND ${condition}`, parameters)
        .execute();
      if (update.affected === 1) events.publish({ operationId: parameters['operationId'] as string, kind: 'intervention' });
      return update;
    });
    return result.affected === 1;
  }
}

/** The columns a decision sets (here, and in the operation-locked decision of `OperationWaitStore`). */
export function decisionValues(decision: InterventionDecision, now: string): Partial<InterventionEntity> {
  return {
    status: decision.action === 'approve' ? 'approved' : 'rejected',
    decision: decision.action,
    decisionReason: decision.reason ?? null,
    decidedBy: decision.decidedBy ?? null,
    decidedAt: now,
    updatedAt: now,
    // F6: an approval's edited arguments, in the row's private reply (an approval has no other reply).
    ...(decision.action === 'approve' && decision.args !== undefined ? { reply: { args: decision.args } } : {}),
  };
}

/** A new intervention row: pending, undecided, unclaimed. */
export function pendingInterventionRow(operationId: string, item: NewIntervention, now: string): InterventionEntity {
  return {
    operationId,
    toolCallId: item.toolCallId,
    stepIndex: item.stepIndex,
    callIndex: item.callIndex,
    identifier: item.identifier,
    apiName: item.apiName,
    args: item.args,
    kind: item.kind,
    status: 'pending',
    claimedBy: null,
    claimedAt: null,
    decision: null,
    decisionReason: null,
    decidedBy: null,
    decidedAt: null,
    reply: null,
    createdAt: now,
    updatedAt: now,
  };
}
