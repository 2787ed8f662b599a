/**
 * Migration (SPEC G3): a deferred result is stored when it arrives, before its after-chain runs.
 * `received_result` / `received_at` on the placeholder hold it while its decider runs the after-chain; if
 * that process dies, a reconciler finishes the chain once the claim lapsed and publishes it (the publish
 * clears both columns). The index serves the reconciler's scan. Nullable columns and a plain index, so the
 * same DDL works on both drivers.
 */
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { qualifiedTable } from '../dialect.js';

const TABLE = 'agent_hooks_tool_result_placeholders';
const INDEX = 'agent_hooks_tool_result_placeholders_received_idx';
const COLUMNS = [
  ['received_result', 'text'],
  ['received_at', 'varchar(32)'],
] as const;

export class AgentHooksReceivedDeferredResults1765500000000 implements MigrationInterface {
  readonly name = 'AgentHooksReceivedDeferredResults1765500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const placeholders = qualifiedTable(queryRunner.connection, TABLE);
    for (const [column, type] of COLUMNS) await queryRunner.query(`ALTER TABLE ${placeholders} ADD COLUMN "${column}" ${type}`);
    await queryRunner.query(`CREATE INDEX "${INDEX}" ON ${placeholders} ("received_at")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // An index lives in its table's schema on PostgreSQL.
    await queryRunner.query(`DROP INDEX ${qualifiedTable(queryRunner.connection, INDEX)}`);
    const placeholders = qualifiedTable(queryRunner.connection, TABLE);
    for (const [column] of [...COLUMNS].reverse()) await queryRunner.query(`ALTER TABLE ${placeholders} DROP COLUMN "${column}"`);
  }
}
