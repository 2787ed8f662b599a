/**
 * Migration (DESIGN §7 `GET /v1/operations`): the list endpoint reads one owner's operations
 * newest first, a page at a time, by the keyset `(created_at, id)`. This index answers that query as one
 * range scan read backwards on both drivers (an ascending index serves `ORDER BY … DESC` on SQLite and
 * PostgreSQL alike, and TypeORM's `@Index` cannot say DESC, so ascending keeps the schema builder quiet).
 */
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { qualifiedTable } from '../dialect.js';

const TABLE = 'agent_hooks_operations';
const INDEX = 'agent_hooks_operations_owner_created_idx';

export class AgentHooksOperationListIndex1765600000000 implements MigrationInterface {
  readonly name = 'AgentHooksOperationListIndex1765600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "${INDEX}" ON ${qualifiedTable(queryRunner.connection, TABLE)} ("owner_id", "created_at", "id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // An index lives in its table's schema on PostgreSQL.
    await queryRunner.query(`DROP INDEX ${qualifiedTable(queryRunner.connection, INDEX)}`);
  }
}
