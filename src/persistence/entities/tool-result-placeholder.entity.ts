/**
 * `agent_hooks_tool_result_placeholders`: a deferred call's result slot. It goes `empty` → `final` exactly
 * once (`UPDATE … WHERE state = 'empty'`): the first final write wins (L4), whichever process makes it.
 */
import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ToolResult } from '../../hooks/agent-events.js';
import { idColumn, jsonColumn, nameColumn, timestampColumn, wordColumn, primaryColumn } from '../columns.js';
import type { PlaceholderState } from '../records.js';

const PK = 'agent_hooks_tool_result_placeholders_pk';

@Entity({ name: 'agent_hooks_tool_result_placeholders' })
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
}
