/**
 * `agent_hooks_hook_outcomes`: the timeline (`GET /v1/operations/:id/timeline`), one row per hook
 * invocation — point, hook id, source, outcome, error code, latency and, on a tool point's row, the tool call
 * id (SPEC F1). Never a payload, body or message (DESIGN §5). `seq` is the global insertion order; `operation_seq` numbers an operation's rows 1, 2, …
 * (the timeline's `seq`, DESIGN §7, from `agent_hooks_timeline_counters`); a batch is numbered in record
 * order, so an operation's rows read back in the order its hooks ran.
 */
import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { HookOutcome, TimelineSource } from '../../hooks/hook-outcome.js';
import { doubleColumn, idColumn, nameColumn, timestampColumn, wordColumn } from '../columns.js';

@Entity({ name: 'agent_hooks_hook_outcomes' })
@Index('agent_hooks_hook_outcomes_operation_operation_seq_uq', ['operationId', 'operationSeq'], { unique: true })
export class HookOutcomeEntity {
  /**
   * `integer` on both drivers: SQLite only auto-increments an `INTEGER PRIMARY KEY`, and one entity set
   * must serve both. PostgreSQL's `serial` therefore tops out at 2^31 − 1 rows ever inserted.
   */
  @PrimaryGeneratedColumn('increment', {
    name: 'seq',
    type: 'integer',
    primaryKeyConstraintName: 'agent_hooks_hook_outcomes_pk',
  })
  seq!: number;

  @Column(idColumn('operation_id'))
  operationId!: string;

  /** 1, 2, … within the operation; null only on a row written by a version before migration 1765300000000. */
  @Column({ name: 'operation_seq', type: 'integer', nullable: true })
  operationSeq!: number | null;

  /** When the hook ran (recorded, not flushed), ISO-8601. */
  @Column(timestampColumn('at'))
  at!: string;

  @Column({ name: 'point', type: 'varchar', length: 64 })
  point!: string;

  @Column(nameColumn('hook_id'))
  hookId!: string;

  @Column(wordColumn('source'))
  source!: TimelineSource;

  @Column(wordColumn('outcome'))
  outcome!: HookOutcome;

  @Column({ name: 'error_code', type: 'varchar', length: 64, nullable: true })
  errorCode!: string | null;

  @Column(doubleColumn('latency_ms'))
  latencyMs!: number;

  /** A tool point's row: its call (F1 derives the key from it, never stores the key); null on other rows. */
  @Column(nameColumn('tool_call_id', true))
  toolCallId!: string | null;
}
