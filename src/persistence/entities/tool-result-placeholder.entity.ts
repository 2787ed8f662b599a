/**
 * `agent_hooks_tool_result_placeholders`: a deferred call's result slot. It goes `empty` → `final` exactly
 * once (`UPDATE … WHERE state = 'empty'`): the first final write wins (L4), whichever process makes it.
 * While `empty`, one result at a time may hold it to run its after-chain (`claimed_by` until `claimed_until`).
 * The result being decided is stored here first (`received_result`, SPEC G3): if its decider dies during the
 * after-chain, a reconciler finishes it once the claim lapsed; the publish clears it, so the raw result never
 * outlives it (the after-chain may have redacted or denied it).
 */
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { ToolResult } from '../../hooks/agent-events.js';
import { idColumn, jsonColumn, nameColumn, timestampColumn, wordColumn, primaryColumn } from '../columns.js';
import type { PlaceholderState } from '../records.js';

const PK = 'agent_hooks_tool_result_placeholders_pk';

@Entity({ name: 'agent_hooks_tool_result_placeholders' })
// What a reconciler scans: received results not published yet, oldest first.
@Index('agent_hooks_tool_result_placeholders_received_idx', ['receivedAt'])
export class ToolResultPlaceholderEntity {
  @PrimaryColumn(primaryColumn(idColumn, 'operation_id', PK))
  operationId!: string;

  @PrimaryColumn(primaryColumn(nameColumn, 'tool_call_id', PK))
  toolCallId!: string;

  @Column(wordColumn('state'))
  state!: PlaceholderState;

  @Column(jsonColumn('result', true))
  result!: ToolResult | null;

  @Column(timestampColumn('created_at'))
  createdAt!: string;

  @Column(timestampColumn('finalized_at', true))
  finalizedAt!: string | null;

  /** Who is running the result's after-chain now (G5): one decider at a time, across processes. */
  @Column(nameColumn('claimed_by', true))
  claimedBy!: string | null;

  /** When that claim lapses unless renewed, so a crashed decider does not block the call forever. */
  @Column(timestampColumn('claimed_until', true))
  claimedUntil!: string | null;

  /** The result a decider received and is running the after-chain for (G3); null once published or given up. */
  @Column(jsonColumn('received_result', true))
  receivedResult!: ToolResult | null;

  /** When `received_result` was stored; null with it. */
  @Column(timestampColumn('received_at', true))
  receivedAt!: string | null;
}
