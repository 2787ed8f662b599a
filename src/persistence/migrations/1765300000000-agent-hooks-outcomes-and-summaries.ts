/**
 * Migration (DESIGN §5, §7): what a new user needs to read an operation.
 * - `operations.error_summary`: a safe summary of a failed operation's error (DESIGN §7: built from our own
 *   fields — model id, HTTP status, an unset variable's name — never a provider body or user text; S3).
 * - `messages.success`: a tool message's outcome, stored with it (`afterStep` `toolResults[].success`);
 *   null on rows written before it (the runtime then falls back to what it guessed before).
 * - `hook_outcomes.operation_seq`: the timeline's `seq`, 1, 2, … within each operation (DESIGN §7), taken
 *   from `agent_hooks_timeline_counters` (one row per operation, bumped once per batch), so it stays right
 *   when several processes write one operation's timeline. Existing rows are numbered in `seq` order.
 * Plain SQL both drivers accept (`ADD COLUMN` of nullable columns, a correlated count, `CREATE TABLE`).
 */
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { qualifiedTable } from '../dialect.js';

export class AgentHooksOutcomesAndSummaries1765300000000 implements MigrationInterface {
  readonly name = 'AgentHooksOutcomesAndSummaries1765300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const table = (name: string) => qualifiedTable(queryRunner.connection, name);
    const outcomes = table('agent_hooks_hook_outcomes');
    const counters = table('agent_hooks_timeline_counters');
    await queryRunner.query(`ALTER TABLE ${table('agent_hooks_operations')} ADD COLUMN "error_summary" varchar(1024)`);
    await queryRunner.query(`ALTER TABLE ${table('agent_hooks_messages')} ADD COLUMN "success" boolean`);
    await queryRunner.query(`ALTER TABLE ${outcomes} ADD COLUMN "operation_seq" integer`);
    await queryRunner.query(
      `UPDATE ${outcomes} SET "operation_seq" = (SELECT COUNT(*) FROM ${outcomes} AS "earlier" WHERE "earlier"."operation_id" = "agent_hooks_hook_outcomes"."operation_id" AND "earlier"."seq" <= "agent_hooks_hook_outcomes"."seq")`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "agent_hooks_hook_outcomes_operation_operation_seq_uq" ON ${outcomes} ("operation_id", "operation_seq")`,
    );
    await queryRunner.query(`CREATE TABLE ${counters} (
      "operation_id" varchar(36) NOT NULL,
      "last_seq" integer NOT NULL,
      CONSTRAINT "agent_hooks_timeline_counters_pk" PRIMARY KEY ("operation_id")
    )`);
    await queryRunner.query(`INSERT INTO ${counters} ("operation_id", "last_seq") SELECT "operation_id", MAX("operation_seq") FROM ${outcomes} GROUP BY "operation_id"`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const table = (name: string) => qualifiedTable(queryRunner.connection, name);
    await queryRunner.query(`DROP TABLE ${table('agent_hooks_timeline_counters')}`);
    await queryRunner.query(`DROP INDEX ${qualifiedIndex(queryRunner, 'agent_hooks_hook_outcomes_operation_operation_seq_uq')}`);
    await queryRunner.query(`ALTER TABLE ${table('agent_hooks_hook_outcomes')} DROP COLUMN "operation_seq"`);
    await queryRunner.query(`ALTER TABLE ${table('agent_hooks_messages')} DROP COLUMN "success"`);
    await queryRunner.query(`ALTER TABLE ${table('agent_hooks_operations')} DROP COLUMN "error_summary"`);
  }
}

/** An index lives in its table's schema on PostgreSQL. */
function qualifiedIndex(queryRunner: QueryRunner, name: string): string {
  return qualifiedTable(queryRunner.connection, name);
}
