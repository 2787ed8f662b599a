/**
 * `agent_hooks_interventions`: tool calls waiting for a human (kind `approval`) or an outside executor
 * (kind `deferred`) — the `pendingTools` of `GET /v1/operations/:id`. A decision and a claim are each
 * written once (compare-and-set on `status` / `claimed_by`). `reply` is private: what the human or executor
 * answered, kept for the runtime and never put in hook events or logs.
 */
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { idColumn, integerColumn, jsonColumn, nameColumn, timestampColumn, wordColumn, primaryColumn } from '../columns.js';
import type { InterventionAction, InterventionKind, InterventionStatus } from '../records.js';

const PK = 'agent_hooks_interventions_pk';

@Entity({ name: 'agent_hooks_interventions' })
export class InterventionEntity {
  @PrimaryColumn(primaryColumn(idColumn, 'operation_id', PK))
  operationId!: string;

  @PrimaryColumn(primaryColumn(nameColumn, 'tool_call_id', PK))
  toolCallId!: string;

  @Column(integerColumn('step_index'))
  stepIndex!: number;

  /** Order of the pending tools within their step (the `callIndex` of DESIGN §3). */
  @Column(integerColumn('call_index'))
  callIndex!: number;

  @Column(nameColumn('identifier'))
  identifier!: string;

  @Column(nameColumn('api_name'))
  apiName!: string;

  @Column(jsonColumn('args'))
  args!: Record<string, unknown>;

  @Column(wordColumn('kind'))
  kind!: InterventionKind;

  @Column(wordColumn('status'))
  status!: InterventionStatus;

  @Column(nameColumn('claimed_by', true))
  claimedBy!: string | null;

  @Column(timestampColumn('claimed_at', true))
  claimedAt!: string | null;

  @Column(wordColumn('decision', true))
  decision!: InterventionAction | null;

  @Column({ name: 'decision_reason', type: 'text', nullable: true })
  decisionReason!: string | null;

  @Column(nameColumn('decided_by', true))
  decidedBy!: string | null;

  @Column(timestampColumn('decided_at', true))
  decidedAt!: string | null;

  @Column(jsonColumn('reply', true))
  reply!: unknown;

  @Column(timestampColumn('created_at'))
  createdAt!: string;

  @Column(timestampColumn('updated_at'))
  updatedAt!: string;
}
