/**
 * `agent_hooks_owed_work`: notifications owed about a committed decision (SPEC G3, DESIGN §5). A row is
 * written in the decision's own transaction and delivered after the commit, at least once: first by the
 * decider (who inserts it already claimed), by a reconciler once that claim lapsed. It names what to deliver
 * and nothing more — point, operation, tool call, action: the event is rebuilt from the intervention at
 * delivery, so every attempt carries the same stable webhook-id, and no prompt, argument, result, reason or
 * secret is ever copied here. One row per operation, point and call (a decision is made once).
 */
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { OwedNotificationPoint } from '../../runtime/runtime-store.port.js';
import { idColumn, integerColumn, nameColumn, primaryColumn, timestampColumn, wordColumn } from '../columns.js';
import type { InterventionAction } from '../records.js';

@Entity({ name: 'agent_hooks_owed_work' })
// An operation's owed rows (leading column); a second row for the same point and call is refused.
@Index('agent_hooks_owed_work_notification_uq', ['operationId', 'point', 'toolCallId'], { unique: true })
// What a reconciler scans: undelivered rows, oldest first.
@Index('agent_hooks_owed_work_undelivered_idx', ['deliveredAt', 'createdAt'])
export class OwedWorkEntity {
  @PrimaryColumn(primaryColumn(idColumn, 'id', 'agent_hooks_owed_work_pk'))
  id!: string;

  @Column(idColumn('operation_id'))
  operationId!: string;

  /** The hook point to deliver (`afterHumanIntervention`, `onStopByHumanIntervention`). */
  @Column({ name: 'point', type: 'varchar', length: 64 })
  point!: OwedNotificationPoint;

  @Column(nameColumn('tool_call_id'))
  toolCallId!: string;

  /** The decision the notification is about, when it has one. */
  @Column(wordColumn('action', true))
  action!: InterventionAction | null;

  @Column(timestampColumn('created_at'))
  createdAt!: string;

  /** Who is delivering it now; a claim lapses at `claimed_until`, so a dead deliverer blocks nothing. */
  @Column(nameColumn('claimed_by', true))
  claimedBy!: string | null;

  @Column(timestampColumn('claimed_until', true))
  claimedUntil!: string | null;

  /** Set once a delivery went through: nothing is owed any more. */
  @Column(timestampColumn('delivered_at', true))
  deliveredAt!: string | null;

  /** How many times it was claimed for delivery (the decider's own claim is the first). */
  @Column(integerColumn('attempts'))
  attempts!: number;
}
