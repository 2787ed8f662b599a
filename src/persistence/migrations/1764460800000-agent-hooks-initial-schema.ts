/**
 * Migration 1: every `agent_hooks_` table. One class for both drivers (the SQL differs in one column,
 * see `initial-schema.sql.ts`), so a host app lists one migration whatever its database.
 */
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectOf, qualifiedTable } from '../dialect.js';
import { initialSchemaDown, initialSchemaUp } from './initial-schema.sql.js';

export class AgentHooksInitialSchema1764460800000 implements MigrationInterface {
  // TypeORM orders migrations by the 13-digit timestamp that ends the name; minifiers keep this one.
  readonly name = 'AgentHooksInitialSchema1764460800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const dataSource = queryRunner.connection;
    for (const sql of initialSchemaUp(dialectOf(dataSource), (table) => qualifiedTable(dataSource, table))) {
      await queryRunner.query(sql);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const dataSource = queryRunner.connection;
    for (const sql of initialSchemaDown((table) => qualifiedTable(dataSource, table))) {
      await queryRunner.query(sql);
    }
  }
}
