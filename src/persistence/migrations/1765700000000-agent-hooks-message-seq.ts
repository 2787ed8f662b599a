/**
 * Migration (DESIGN §5): the operation row counts its messages. `message_seq` is the `seq` of the
 * operation's last message; whoever appends messages bumps it in the statement that holds the row (a
 * step's conditional UPDATE … RETURNING, or the append's own UPDATE), instead of reading `MAX(seq)` of the
 * messages on every append. Existing operations start from their last message. Same DDL on both drivers
 * (SQLite adds a NOT NULL column only with a default).
 */
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { qualifiedTable } from '../dialect.js';

export class AgentHooksMessageSeq1765700000000 implements MigrationInterface {
  readonly name = 'AgentHooksMessageSeq1765700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const operations = qualifiedTable(queryRunner.connection, 'agent_hooks_operations');
    const messages = qualifiedTable(queryRunner.connection, 'agent_hooks_messages');
    await queryRunner.query(`ALTER TABLE ${operations} ADD COLUMN "message_seq" integer NOT NULL DEFAULT 0`);
    await queryRunner.query(
      `UPDATE ${operations} SET "message_seq" = COALESCE((SELECT MAX(m."seq") FROM ${messages} m WHERE m."operation_id" = ${operations}."id"), 0)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE ${qualifiedTable(queryRunner.connection, 'agent_hooks_operations')} DROP COLUMN "message_seq"`);
  }
}
