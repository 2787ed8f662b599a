/**
 * Migration (v0.2, SPEC G8): the digest of the request that created an operation under an idempotency key,
 * so a retry with the same key and another body is told apart (422 `idempotency_key_reused`). SHA-256 as
 * 64 hex characters; nullable (rows from before, and keys given without a digest), added the same way on
 * SQLite and PostgreSQL.
 */
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { qualifiedTable } from '../dialect.js';

export class AgentHooksIdempotencyDigest1765000000000 implements MigrationInterface {
  readonly name = 'AgentHooksIdempotencyDigest1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE ${qualifiedTable(queryRunner.connection, 'agent_hooks_operations')} ADD COLUMN "idempotency_digest" varchar(64)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE ${qualifiedTable(queryRunner.connection, 'agent_hooks_operations')} DROP COLUMN "idempotency_digest"`);
  }
}
