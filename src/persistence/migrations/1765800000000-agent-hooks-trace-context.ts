/**
 * Migration (v0.2, SPEC O3): an operation's W3C trace context (`traceparent`, `tracestate`; no baggage,
 * nothing secret), so steps that run later — after an approval, a restart, on another worker — join the
 * operation's trace. A nullable text column (simple-json), added the same way on SQLite and PostgreSQL.
 */
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { qualifiedTable } from '../dialect.js';

export class AgentHooksTraceContext1765800000000 implements MigrationInterface {
  readonly name = 'AgentHooksTraceContext1765800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE ${qualifiedTable(queryRunner.connection, 'agent_hooks_operations')} ADD COLUMN "trace_context" text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE ${qualifiedTable(queryRunner.connection, 'agent_hooks_operations')} DROP COLUMN "trace_context"`);
  }
}
