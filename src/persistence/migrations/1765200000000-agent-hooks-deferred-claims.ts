/**
 * Migration (G5): who is deciding a deferred result now. `claimed_by` / `claimed_until` on the placeholder
 * let exactly one result of a call run its after-chain at a time, across processes; the expiry frees a
 * claim a crashed decider left. Nullable columns only, so `ADD COLUMN` works the same on both drivers.
 */
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { qualifiedTable } from '../dialect.js';

const COLUMNS = [
  ['claimed_by', 'varchar(255)'],
  ['claimed_until', 'varchar(32)'],
] as const;

export class AgentHooksDeferredClaims1765200000000 implements MigrationInterface {
  readonly name = 'AgentHooksDeferredClaims1765200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const placeholders = qualifiedTable(queryRunner.connection, 'agent_hooks_tool_result_placeholders');
    for (const [column, type] of COLUMNS) await queryRunner.query(`ALTER TABLE ${placeholders} ADD COLUMN "${column}" ${type}`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const placeholders = qualifiedTable(queryRunner.connection, 'agent_hooks_tool_result_placeholders');
    for (const [column] of [...COLUMNS].reverse()) await queryRunner.query(`ALTER TABLE ${placeholders} DROP COLUMN "${column}"`);
  }
}
