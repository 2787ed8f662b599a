/**
 * The host's own migration, run by its pipeline together with nest-agent-hooks' (data-source.ts). Written
 * with TypeORM's schema builder, so the table goes into the DataSource's schema like the agent tables.
 */
import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

export class CreateRefunds1766000000000 implements MigrationInterface {
  name = 'CreateRefunds1766000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'refunds',
        columns: [
          { name: 'id', type: 'uuid', isPrimary: true },
          { name: 'order', type: 'varchar', length: '64' },
          { name: 'operation_id', type: 'varchar', length: '128' },
          { name: 'idempotency_key', type: 'varchar', length: '128', isUnique: true },
          { name: 'created_at', type: 'timestamptz', default: 'now()' },
        ],
      }),
    );
    await queryRunner.createIndex('refunds', new TableIndex({ name: 'refunds_order', columnNames: ['order'] }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('refunds');
  }
}
