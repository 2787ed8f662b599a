/**
 * The transactions of an operation that waits for someone else (Runtime II): human approvals and deferred
 * results. Each one holds the operation's row (`lockOperationRow`) so writers of one operation take turns,
 * and each is all or nothing:
 * - `record`: interventions a step needs, with the empty placeholder of each deferred call, once (a retried
 *   step finds them recorded and adds nothing);
 * - `pause`: running → waiting, only while something is still pending (a deferred result that arrived
 *   during the step means there is nothing to wait for);
 * - `resume`: waiting → running, only when nothing is pending any more — of two callers resolving the last
 *   two items at once, exactly one resumes;
 * - `publishDeferred`: the compare-and-set on the empty placeholder (L4), the published tool message and
 *   the intervention's completion. The first final write wins; every later one changes nothing. The
 *   received result stored at the claim (SPEC G3) is replaced by the final one;
 * - `decide`: a human decision on a pending approval;
 * - `decideDurably` (SPEC G3): the decision with everything it makes happen — the owed notifications about
 *   it (claimed by the decider), then waiting → running (`approve`, `rejectAndContinue`, once nothing else
 *   is pending) or the rejection receipt with the terminal transition (`reject`) — so a crash right after it
 *   loses nothing and never makes a second decision necessary;
 * and neither `publishDeferred` nor `decide` writes anything once the operation is completed (G5).
 * None of them touch the optimistic version except the status transitions, so a step that is still
 * running is not made stale by a deferred result published beside it.
 */
import type { ToolResult } from '../hooks/agent-events.js';
import { InterventionEntity } from './entities/intervention.entity.js';
import { OperationEntity } from './entities/operation.entity.js';
import { ToolResultPlaceholderEntity } from './entities/tool-result-placeholder.entity.js';
import { SqlExpression } from './entity-columns.js';
import { decisionValues, pendingInterventionRow, type InterventionDecision } from './intervention.store.js';
import { insertMessages } from './message-writer.js';
import { lockOperationRow } from './operation-row-lock.js';
import { OperationNotFoundError } from './persistence-errors.js';
import type { MessageRecord, NewIntervention, NewToolMessage } from './records.js';
import { SqlParams, type SqlExecutor } from './sql-session.js';
import type { CommitEvents, StoreDatabase } from './store-database.js';
import { TERMINAL_HOOKS_OWNER } from './operation.store.js';
import { insertOwedNotifications, type OwedWorkRecord } from './owed-work.store.js';
import type { DecisionEffects, DecisionOutcome, DurableDecision, OperationStatus } from '../runtime/runtime-store.port.js';
import type { OperationEventKind } from '../runtime/operation-events.port.js';
import { nowIso, type StoreOptions } from './store-options.js';

export type PublishDeferredResult =
  /** `resumed`: the result was the last pending item of a waiting operation, which is running again (same transaction). */
  | { published: true; message: MessageRecord; resumed: boolean }
  /** `already_final`: the placeholder was final, missing, or claimed by another decider; `operation_completed`: G5. */
  | { published: false; reason: 'already_final' | 'operation_completed' };

/** What a human decision met, read under the operation's row lock (the port's `DecisionOutcome`). */
export type DecideOutcome = DecisionOutcome;

/** What commits with a durable decision besides the decision itself: the port's shape. */
export type { DecisionEffects } from '../runtime/runtime-store.port.js';

/** What a durable decision committed (the port's `DurableDecision`, with the stores' records); nothing at all unless `outcome` is `decided`. */
export interface DurableDecisionResult extends DurableDecision {
  owed: OwedWorkRecord[];
  receipt?: MessageRecord;
}

/** A test fails its statements through the session wrapper (`SQL_SESSION_WRAPPER`), the production ones. */
export type OperationWaitOptions = StoreOptions;

export class OperationWaitStore {
  private readonly db: StoreDatabase;

  constructor(
    database: StoreDatabase,
    private readonly options: OperationWaitOptions = {},
  ) {
    this.db = database;
  }

  /** Records the interventions not recorded yet (deferred ones with an empty placeholder); returns how many were new. */
  record(operationId: string, items: readonly NewIntervention[]): Promise<number> {
    if (items.length === 0) return Promise.resolve(0);
    return this.db.sessionTransaction(async (tx, events) => {
      await this.lock(tx, operationId);
      const existing = await tx.query(`SELECT "tool_call_id" FROM ${this.db.table('agent_hooks_interventions')} WHERE "operation_id" = $1`, [operationId]);
      const known = new Set(existing.records.map((row) => row['tool_call_id']));
      const now = nowIso(this.options);
      const fresh = items.filter((item) => !known.has(item.toolCallId));
      for (const item of fresh) {
        const row = pendingInterventionRow(operationId, item, now);
        await this.insert(tx, InterventionEntity, row);
        if (item.kind === 'deferred') {
          const placeholder: ToolResultPlaceholderEntity = {
            operationId,
            toolCallId: item.toolCallId,
            state: 'empty',
            result: null,
            createdAt: now,
            finalizedAt: null,
            claimedBy: null,
            claimedUntil: null,
            receivedResult: null,
            receivedAt: null,
          };
          await this.insert(tx, ToolResultPlaceholderEntity, placeholder);
        }
      }
      if (fresh.length > 0) events.publish({ operationId, kind: 'intervention' });
      return fresh.length;
    });
  }

  /** running → waiting if some intervention is still pending: true when the operation now waits. */
  pause(operationId: string): Promise<boolean> {
    return this.transition(operationId, 'running', 'waiting', (pending) => pending > 0);
  }

  /**
   * Publishes a deferred result: finalizes the empty placeholder, appends the tool message and completes the
   * intervention (keeping `reply` private), in one transaction. Nothing is written when the operation is
   * completed — read under its row lock, so a concurrent cancel is either before (refused) or after (G5) —
   * or when the placeholder was already final (or never existed), or, given `claimant`, is not held by it.
   * When the result was the last pending item of a waiting operation, the same transaction makes it
   * runnable again (waiting → running, SPEC G3).
   */
  publishDeferred(
    operationId: string,
    toolCallId: string,
    result: ToolResult,
    message: NewToolMessage,
    options: { reply?: unknown; claimant?: string } = {},
  ): Promise<PublishDeferredResult> {
    return this.db.sessionTransaction(async (tx, events) => {
      const operation = await this.lock(tx, operationId);
      if (operation.status === 'completed') return { published: false, reason: 'operation_completed' };
      const now = nowIso(this.options);
      const finalized = await this.update(
        tx,
        ToolResultPlaceholderEntity,
        // The received result goes: what stays is the final one, after the after-chain (G3, which may redact it).
        { state: 'final', result, finalizedAt: now, claimedBy: null, claimedUntil: null, receivedResult: null, receivedAt: null },
        (params) =>
          `"operation_id" = ${params.bind(operationId)} AND "tool_call_id" = ${params.bind(toolCallId)} AND "state" = 'empty'` +
          // A decider whose claim lapsed and was taken over has lost: the current claimant publishes.
          (options.claimant !== undefined ? ` AND "claimed_by" = ${params.bind(options.claimant)}` : ''),
      );
      if (finalized !== 1) return { published: false, reason: 'already_final' };
      const [published] = await insertMessages(this.db, tx, operationId, [message], now);
      await this.update(
        tx,
        InterventionEntity,
        { status: 'completed', reply: options.reply ?? null, updatedAt: now },
        (params) => `"operation_id" = ${params.bind(operationId)} AND "tool_call_id" = ${params.bind(toolCallId)}`,
      );
      const resumed = await this.resumeLocked(tx, operation, now);
      publishAll(events, operation, resumed ? 'running' : operation.status, resumed, ['message', 'intervention']);
      return { published: true, message: published!, resumed };
    });
  }

  /**
   * A human decision and what it makes happen, in one transaction under the operation's row lock (SPEC G3).
   * Nothing is written when the operation is completed (G5) or the item is not a pending approval. Else:
   * the decision; one owed row per `effects.notify` point, claimed by `effects.claimant` for `holdMs` (the
   * decider delivers them; a reconciler only once that claim lapsed); then
   * - `approve` / `rejectAndContinue`: waiting → running (version + 1) when nothing else is pending;
   * - `reject`: the receipt (`effects.receipt`) and the terminal transition, as `OperationStore.complete`
   *   makes it (reason `interrupted`, version + 1, the terminal sequence held for a while and then owed).
   * The commit publishes `intervention`, `owed`, `message` and `status` events (after the commit only).
   */
  decideDurably(operationId: string, toolCallId: string, decision: InterventionDecision, effects: DecisionEffects): Promise<DurableDecisionResult> {
    if (effects.receipt !== undefined && (decision.action !== 'reject' || effects.receipt.toolCallId !== toolCallId)) {
      throw new TypeError('a decision receipt belongs to a reject of the same tool call');
    }
    return this.db.sessionTransaction(async (tx, events) => {
      const operation = await this.lock(tx, operationId);
      const nothing = (outcome: DecideOutcome): DurableDecisionResult => ({ outcome, resumed: false, completed: false, owed: [] });
      if (operation.status === 'completed') return nothing('operation_completed');
      const now = nowIso(this.options);
      if (!(await this.writeDecision(tx, operationId, toolCallId, decision, now))) return nothing('not_pending');
      const owed = await insertOwedNotifications(
        this.db,
        tx,
        operationId,
        { toolCallId, action: decision.action, points: effects.notify, claimant: effects.claimant, holdMs: effects.holdMs },
        now,
      );
      const kinds: OperationEventKind[] = ['intervention', ...(owed.length > 0 ? (['owed'] as const) : [])];
      let resumed = false;
      let receipt: MessageRecord | undefined;
      if (decision.action === 'reject') {
        if (effects.receipt) {
          [receipt] = await insertMessages(this.db, tx, operationId, [effects.receipt], now);
          kinds.push('message');
        }
        await this.completeLocked(tx, operationId, now, effects.terminalHold ?? { owner: TERMINAL_HOOKS_OWNER, ms: effects.holdMs });
      } else {
        resumed = await this.resumeLocked(tx, operation, now);
      }
      const completed = decision.action === 'reject';
      publishAll(events, operation, completed ? 'completed' : resumed ? 'running' : operation.status, completed || resumed, kinds);
      return { outcome: 'decided', resumed, completed, owed, ...(receipt ? { receipt } : {}) };
    });
  }

  /** The decision on a pending approval (a compare-and-set on its status): false when it was not pending. */
  private async writeDecision(tx: SqlExecutor, operationId: string, toolCallId: string, decision: InterventionDecision, now: string): Promise<boolean> {
    const affected = await this.update(
      tx,
      InterventionEntity,
      decisionValues(decision, now),
      (params) => `"operation_id" = ${params.bind(operationId)} AND "tool_call_id" = ${params.bind(toolCallId)} AND "status" = 'pending' AND "kind" = 'approval'`,
    );
    return affected === 1;
  }

  /**
   * waiting → running (version + 1) inside the caller's transaction, which holds the operation's row: only
   * when nothing is pending any more, so of two writers resolving the last two items exactly one resumes.
   */
  private async resumeLocked(tx: SqlExecutor, operation: OperationEntity, now: string): Promise<boolean> {
    if (operation.status !== 'waiting') return false;
    if ((await this.pending(tx, operation.id)) > 0) return false;
    const affected = await this.update(
      tx,
      OperationEntity,
      { status: 'running', updatedAt: now, version: VERSION_PLUS_ONE },
      (params) => `"id" = ${params.bind(operation.id)} AND "status" = 'waiting'`,
    );
    return affected === 1;
  }

  /**
   * The terminal transition of a stopping rejection inside the caller's transaction, the way
   * `OperationStore.complete` makes it: reason `interrupted`, version + 1, the terminal sequence held by
   * `hold.owner` until now + `hold.ms` — after that a reconciler runs it (`claimOwedTerminalHooks`).
   */
  private async completeLocked(tx: SqlExecutor, operationId: string, now: string, hold: { owner: string; ms: number }): Promise<void> {
    await this.update(
      tx,
      OperationEntity,
      {
        status: 'completed',
        reason: 'interrupted',
        errorType: null,
        errorMessage: null,
        errorSummary: null,
        leaseOwner: hold.owner,
        leaseUntil: new Date(Date.parse(now) + hold.ms).toISOString(),
        completedAt: now,
        updatedAt: now,
        version: VERSION_PLUS_ONE,
      },
      (params) => `"id" = ${params.bind(operationId)} AND "status" <> 'completed'`,
    );
  }

  private transition(
    operationId: string,
    from: 'running' | 'waiting',
    to: 'running' | 'waiting',
    allowed: (pending: number) => boolean,
  ): Promise<boolean> {
    return this.db.sessionTransaction(async (tx, events) => {
      const row = await this.lock(tx, operationId);
      if (row.status !== from) return false;
      if (!allowed(await this.pending(tx, operationId))) return false;
      const now = nowIso(this.options);
      const affected = await this.update(
        tx,
        OperationEntity,
        // A waiting operation holds no step, so no lease: whoever resumes it may take the lease at once.
        { status: to, updatedAt: now, version: VERSION_PLUS_ONE, ...(to === 'waiting' ? { leaseOwner: null, leaseUntil: null } : {}) },
        (params) => `"id" = ${params.bind(operationId)} AND "status" = ${params.bind(from)}`,
      );
      // The row is held (or, on SQLite, the session's gate is): its version moved by exactly one.
      if (affected === 1) events.publish({ operationId, kind: 'status', status: to, version: row.version + 1 });
      return affected === 1;
    });
  }

  private async lock(tx: SqlExecutor, operationId: string): Promise<OperationEntity> {
    const row = await lockOperationRow(this.db, tx, operationId);
    if (!row) throw new OperationNotFoundError(operationId);
    return row;
  }

  /** How many of the operation's interventions are still pending. */
  private async pending(tx: SqlExecutor, operationId: string): Promise<number> {
    const { records } = await tx.query(
      `SELECT COUNT(*) AS "pending" FROM ${this.db.table('agent_hooks_interventions')} WHERE "operation_id" = $1 AND "status" = 'pending'`,
      [operationId],
    );
    return Number(records[0]?.['pending'] ?? 0);
  }

  private async insert<T extends object>(tx: SqlExecutor, target: new () => T, row: T): Promise<void> {
    const params = new SqlParams(tx.dialect === 'postgres');
    await tx.query(this.db.columns<T>(target).insert([row], params), params.values);
  }

  /** An UPDATE of `target`'s rows matching `where` (which binds its own values): how many it changed. */
  private async update<T extends object>(
    tx: SqlExecutor,
    target: new () => T,
    values: { [K in keyof T]?: T[K] | SqlExpression },
    where: (params: SqlParams) => string,
  ): Promise<number> {
    const params = new SqlParams(tx.dialect === 'postgres');
    const result = await tx.query(this.db.columns<T>(target).update(values, params, where), params.values);
    return result.affected;
  }
}

const VERSION_PLUS_ONE = new SqlExpression('"version" + 1');

/**
 * Publishes one event per kind of change, each with the operation's status and version after the commit
 * (`moved`: the transaction bumped the version), plus a `status` event when the status moved.
 */
function publishAll(events: CommitEvents, operation: OperationEntity, status: OperationStatus, moved: boolean, kinds: readonly OperationEventKind[]): void {
  const version = moved ? operation.version + 1 : operation.version;
  for (const kind of kinds) events.publish({ operationId: operation.id, kind, status, version });
  if (moved) events.publish({ operationId: operation.id, kind: 'status', status, version });
}
