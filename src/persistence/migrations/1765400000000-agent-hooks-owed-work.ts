/**
 * Migration (SPEC G3): `agent_hooks_owed_work`, the notifications owed about a committed decision
 * (DESIGN §5). A decision, "runnable again" and the rows saying who must still hear of it commit together;
 * the rows are delivered after the commit, at least once. Identifiers only — no payload. Plain DDL both
 * drivers accept.
 */
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { qualifiedTable } from '../dialect.js';

const TABLE = 'agent_hooks_owed_work';

export class AgentHooksOwedWork1765400000000 implements MigrationInterface {
  readonly name = 'AgentHooksOwedWork1765400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const owed = qualifiedTable(queryRunner.connection, TABLE);
    await queryRunner.query(`CREATE TABLE ${owed} (
      "id" varchar(36) NOT NULL,
      "operation_id" varchar(36) NOT NULL,
      "point" varchar(64) NOT NULL,
      "tool_call_id" varchar(255) NOT NULL,
      "action" varchar(32),
      "created_at" varchar(32) NOT NULL,
      "claimed_by" varchar(255),
      "claimed_until" varchar(32),
      "delivered_at" varchar(32),
      "attempts" integer NOT NULL,
      CONSTRAINT "agent_hooks_owed_work_pk" PRIMARY KEY ("id")
    )`);
    await queryRunner.query(`CREATE UNIQUE INDEX "agent_hooks_owed_work_notification_uq" ON ${owed} ("operation_id", "point", "tool_call_id")`);
    await queryRunner.query(`CREATE INDEX "agent_hooks_owed_work_undelivered_idx" ON ${owed} ("delivered_at", "created_at")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Its indexes go with it.
    await queryRunner.query(`DROP TABLE ${qualifiedTable(queryRunner.connection, TABLE)}`);
  }
}
