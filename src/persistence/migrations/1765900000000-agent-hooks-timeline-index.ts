/**
 * Migration (issue 14, hook overhead): the timeline's `(operation_id, seq)` index goes. Since 1765300000000
 * every read orders an operation's rows by `operation_seq`, which the unique `(operation_id, operation_seq)`
 * index answers (as it answers retention's deletes by operation); the older index only cost a third B-tree
 * written with every batch of hook rows — on SQLite ≈ a quarter of what recording the rows cost a step.
 */
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { qualifiedTable } from '../dialect.js';

const TABLE = 'agent_hooks_hook_outcomes';
const INDEX = 'agent_hooks_hook_outcomes_operation_seq_idx';

export class AgentHooksTimelineIndex1765900000000 implements MigrationInterface {
  readonly name = 'AgentHooksTimelineIndex1765900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // An index lives in its table's schema on PostgreSQL.
    await queryRunner.query(`DROP INDEX ${qualifiedTable(queryRunner.connection, INDEX)}`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "${INDEX}" ON ${qualifiedTable(queryRunner.connection, TABLE)} ("operation_id", "seq")`);
  }
}
