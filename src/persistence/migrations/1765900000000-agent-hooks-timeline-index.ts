/**
 * Migration (DESIGN §5): the timeline's `(operation_id, seq)` index goes. Since 1765300000000
 * every read orders an operation's rows by `operation_seq`, which the unique `(operation_id, operation_seq)`
 * index answers (as it answers retention's deletes by operation); the older index only cost a third B-tree
 * written with every batch of hook rows, read by no query.
 * From this version on, SQLite numbers timeline rows from that unique index and no longer keeps
 * `agent_hooks_timeline_counters` (PostgreSQL does): `down()` brings the counters up to date, so an older
 * version, which numbers from them, goes on without a duplicate `seq`. Two versions must not share one
 * SQLite file at once.
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
    const outcomes = qualifiedTable(queryRunner.connection, TABLE);
    const counters = qualifiedTable(queryRunner.connection, 'agent_hooks_timeline_counters');
    await queryRunner.query(
      `INSERT INTO ${counters} ("operation_id", "last_seq") SELECT "operation_id", MAX("operation_seq") FROM ${outcomes} WHERE "operation_seq" IS NOT NULL GROUP BY "operation_id" ` +
        `ON CONFLICT ("operation_id") DO UPDATE SET "last_seq" = excluded."last_seq"`,
    );
    await queryRunner.query(`CREATE INDEX "${INDEX}" ON ${outcomes} ("operation_id", "seq")`);
  }
}
