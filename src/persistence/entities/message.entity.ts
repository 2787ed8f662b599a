/**
 * `agent_hooks_messages`: the published conversation (DESIGN §5, §7): user prompts, assistant contents
 * with their tool calls, and tool results exactly as published — the allowed or sanitized result with its
 * hook verdict (`error`, `state.hookVerdict`), never review metadata (P1, P3).
 */
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { idColumn, integerColumn, jsonColumn, nameColumn, timestampColumn, wordColumn, primaryColumn } from '../columns.js';
import type { MessageRole, StoredToolCall, ToolMessageError } from '../records.js';

@Entity({ name: 'agent_hooks_messages' })
// Conversation order; also what makes two concurrent appends at the same position collide.
@Index('agent_hooks_messages_operation_seq_uq', ['operationId', 'seq'], { unique: true })
// A tool result is published once per call, whoever publishes it (a retried step, a second worker). Only
// tool messages carry a tool call id; NULLs never collide in a unique index, on either database.
@Index('agent_hooks_messages_tool_call_uq', ['operationId', 'toolCallId'], { unique: true })
export class MessageEntity {
  @PrimaryColumn(primaryColumn(idColumn, 'id', 'agent_hooks_messages_pk'))
  id!: string;

  @Column(idColumn('operation_id'))
  operationId!: string;

  /** 1, 2, 3 … within the operation. */
  @Column(integerColumn('seq'))
  seq!: number;

  @Column(wordColumn('role'))
  role!: MessageRole;

  @Column({ name: 'content', type: 'text' })
  content!: string;

  /** Assistant messages: the tool calls the model asked for. */
  @Column(jsonColumn('tool_calls', true))
  toolCalls!: StoredToolCall[] | null;

  /** Tool messages: which call this result answers. */
  @Column(nameColumn('tool_call_id', true))
  toolCallId!: string | null;

  @Column(nameColumn('identifier', true))
  identifier!: string | null;

  @Column(nameColumn('api_name', true))
  apiName!: string | null;

  /** A hook verdict on a tool message (DESIGN §7). */
  @Column(wordColumn('error', true))
  error!: ToolMessageError | null;

  /** The published `state` (a tool's own state, and `hookVerdict` when a hook decided). */
  @Column(jsonColumn('state', true))
  state!: Record<string, unknown> | null;

  /** A tool message's outcome (`afterStep` `toolResults[].success`); null for other roles and older rows. */
  @Column({ name: 'success', type: 'boolean', nullable: true })
  success!: boolean | null;

  @Column(timestampColumn('created_at'))
  createdAt!: string;
}
