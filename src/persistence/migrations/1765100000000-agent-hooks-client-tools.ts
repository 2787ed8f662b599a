/**
 * Migration (v0.2, SPEC G1): an operation's declared client tools (`execAgent({ clientTools })`,
 * `POST /v1/operations { clientTools }`), kept with the operation so every step — in any process, after a
 * restart — offers the model the same tools. A nullable text column (simple-json), added the same way on
 * SQLite and PostgreSQL.
 */
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { qualifiedTable } from '../dialect.js';

export class AgentHooksClientTools1765100000000 implements MigrationInterface {
  readonly name = 'AgentHooksClientTools1765100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE ${qualifiedTable(queryRunner.connection, 'agent_hooks_operations')} ADD COLUMN "client_tools" text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE ${qualifiedTable(queryRunner.connection, 'agent_hooks_operations')} DROP COLUMN "client_tools"`);
  }
}
