/**
 * Migration (v0.3, SPEC F1): a timeline row of a tool point records the tool call it belongs to, so the read
 * mapping can derive the call's idempotency key (the key itself is never stored). A nullable column, added
 * the same way on SQLite and PostgreSQL; rows written before it have none and show no key.
 */
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { NAME_LENGTH } from '../columns.js';
import { qualifiedTable } from '../dialect.js';

const TABLE = 'agent_hooks_hook_outcomes';

export class AgentHooksTimelineToolCall1766000000000 implements MigrationInterface {
  readonly name = 'AgentHooksTimelineToolCall1766000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE ${qualifiedTable(queryRunner.connection, TABLE)} ADD COLUMN "tool_call_id" varchar(${NAME_LENGTH})`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE ${qualifiedTable(queryRunner.connection, TABLE)} DROP COLUMN "tool_call_id"`);
  }
}
