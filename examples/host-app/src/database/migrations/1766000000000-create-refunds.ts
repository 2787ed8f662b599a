/** The host's own migration, run by its pipeline together with nest-agent-hooks' (data-source.ts). */
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateRefunds1766000000000 implements MigrationInterface {
  name = 'CreateRefunds1766000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "refunds" (
      "id" uuid PRIMARY KEY,
      "order" varchar(64) NOT NULL,
      "operation_id" varchar(128) NOT NULL,
      "idempotency_key" varchar(128) NOT NULL UNIQUE,
      "created_at" timestamptz NOT NULL DEFAULT now()
    )`);
    await queryRunner.query(`CREATE INDEX "refunds_order" ON "refunds" ("order")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "refunds"`);
  }
}
