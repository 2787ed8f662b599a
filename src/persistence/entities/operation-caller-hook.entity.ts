/**
 * `agent_hooks_operation_hooks`: the caller hooks given to `execAgent({ hooks })`, restored in `position`
 * order on every step (W3, L2). Only the webhook part is stored, with its `${VAR}` header templates as
 * given — never resolved values (W6); handler functions live in memory only.
 */
import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { AgentHookWebhook } from '../../hooks/agent-hook.js';
import { idColumn, jsonColumn, nameColumn, primaryColumn } from '../columns.js';

const PK = 'agent_hooks_operation_hooks_pk';

@Entity({ name: 'agent_hooks_operation_hooks' })
export class OperationCallerHookEntity {
  @PrimaryColumn(primaryColumn(idColumn, 'operation_id', PK))
  operationId!: string;

  /** Registration order (L3); unique per operation through the primary key. */
  @PrimaryColumn({ name: 'position', type: 'integer', primaryKeyConstraintName: PK })
  position!: number;

  @Column(nameColumn('hook_id'))
  hookId!: string;

  /** The hook point (an agent-family point name). */
  @Column({ name: 'type', type: 'varchar', length: 64 })
  type!: string;

  @Column({ name: 'matcher', type: 'text', nullable: true })
  matcher!: string | null;

  @Column(jsonColumn('webhook'))
  webhook!: AgentHookWebhook;
}
