/** The host's own table, in the same DataSource as the agent tables: one row per refund the tool made. */
import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'refunds' })
export class Refund {
  @PrimaryColumn('uuid')
  id!: string;

  @Column({ type: 'varchar', length: 64 })
  order!: string;

  @Column({ name: 'operation_id', type: 'varchar', length: 128 })
  operationId!: string;

  /** The tool call's idempotency key: a call that runs twice (a crash, a retry) refunds once. */
  @Column({ name: 'idempotency_key', type: 'varchar', length: 128, unique: true })
  idempotencyKey!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
