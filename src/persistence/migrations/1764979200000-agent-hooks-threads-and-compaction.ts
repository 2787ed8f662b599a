/**
 * Migration 2 (Runtime II): sub-agent threads (`thread_id`, and the parent's tool call a child answers,
 * `parent_tool_call_id`) and the latest compaction of an operation's conversation (DESIGN §3). Nullable
 * columns only, so `ALTER TABLE … ADD COLUMN` works the same on SQLite and PostgreSQL. And one tool
 * result per call (`agent_hooks_messages_tool_call_uq`): the database refuses a second publish. And
 * `terminal_hooks_at`: when the terminal sequence of a completed operation finished (null while owed).
 */
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { qualifiedTable } from '../dialect.js';

const COLUMNS = [
  ['thread_id', 'varchar(36)'],
  ['parent_tool_call_id', 'varchar(255)'],
  ['compaction_group_id', 'varchar(36)'],
  ['compaction_summary', 'text'],
  ['compacted_through_seq', 'integer'],
  ['terminal_hooks_at', 'varchar(32)'],
] as const;

export class AgentHooksThreadsAndCompaction1764979200000 implements MigrationInterface {
  readonly name = 'AgentHooksThreadsAndCompaction1764979200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const operations = qualifiedTable(queryRunner.connection, 'agent_hooks_operations');
    for (const [column, type] of COLUMNS) await queryRunner.query(`ALTER TABLE ${operations} ADD COLUMN "${column}" ${type}`);
    const messages = qualifiedTable(queryRunner.connection, 'agent_hooks_messages');
    await queryRunner.query(`CREATE UNIQUE INDEX "agent_hooks_messages_tool_call_uq" ON ${messages} ("operation_id", "tool_call_id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // An index lives in its table's schema: the same qualification names it.
    await queryRunner.query(`DROP INDEX ${qualifiedTable(queryRunner.connection, 'agent_hooks_messages_tool_call_uq')}`);
    const operations = qualifiedTable(queryRunner.connection, 'agent_hooks_operations');
    for (const [column] of [...COLUMNS].reverse()) await queryRunner.query(`ALTER TABLE ${operations} DROP COLUMN "${column}"`);
  }
}
