/**
 * Runs the agent-hooks migrations on any DataSource — ours, or a host app's whatever its own `migrations`
 * option lists. Applied ones are recorded in `agent_hooks_migrations` on every DataSource (one table, so a
 * database used first through a URL and then as `database: 'host'`, or the other way round, is migrated
 * once), and what a host's own pipeline recorded in its migrations table counts as applied. Called at start on our
 * own DataSources; on a host's (`database: 'host'`) only checked, never run (the host's pipeline owns it).
 *
 * Several workers may start at once on one PostgreSQL database: a session advisory lock makes them take
 * turns, so the second finds the migrations applied instead of failing on `CREATE TABLE`. The schema named
 * by the options is created first, because TypeORM keeps its migrations table in it.
 */
import type { DataSource, QueryRunner } from 'typeorm';
import { dialectOf, quoteIdentifier, schemaOf } from './dialect.js';
import { AgentHooksMigrationExecutor } from './migrations/agent-hooks-migration-record.js';
import { AGENT_HOOKS_MIGRATIONS } from './migrations/agent-hooks-migrations.js';

/** Applies pending agent-hooks migrations in one transaction; returns the names applied (empty: up to date). */
export async function runAgentHooksMigrations(dataSource: DataSource): Promise<string[]> {
  const queryRunner = dataSource.createQueryRunner();
  const postgres = dialectOf(dataSource) === 'postgres';
  try {
    if (postgres) await lockMigrations(queryRunner, dataSource);
    try {
      const schema = schemaOf(dataSource);
      if (schema) await queryRunner.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
      // Only ours, whatever `dataSource.migrations` holds, recorded in agent_hooks_migrations.
      const executor = new AgentHooksMigrationExecutor(dataSource, AGENT_HOOKS_MIGRATIONS, queryRunner);
      executor.transaction = 'all';
      await executor.adoptRecords(queryRunner);
      const applied = await executor.executePendingMigrations();
      return applied.map((migration) => migration.name);
    } finally {
      if (postgres) await unlockMigrations(queryRunner, dataSource);
    }
  } finally {
    await queryRunner.release();
  }
}

/** Names of our migrations not yet recorded in the DataSource's migrations table (read-only). */
export async function pendingAgentHooksMigrations(dataSource: DataSource): Promise<string[]> {
  const executor = new AgentHooksMigrationExecutor(dataSource, AGENT_HOOKS_MIGRATIONS);
  const queryRunner = dataSource.createQueryRunner();
  try {
    const applied = new Set([...(await executor.recordedNames(queryRunner)), ...(await executor.foreignNames(queryRunner))]);
    return AGENT_HOOKS_MIGRATIONS.map((Class) => new Class().name ?? Class.name).filter((name) => !applied.has(name));
  } finally {
    await queryRunner.release();
  }
}

/** One lock per schema, so parallel test files (one schema each) do not wait for one another. */
const lockKey = (dataSource: DataSource) => `nest-agent-hooks:migrations:${schemaOf(dataSource) ?? ''}`;

async function lockMigrations(queryRunner: QueryRunner, dataSource: DataSource): Promise<void> {
  await queryRunner.query('SELECT pg_advisory_lock(hashtext($1))', [lockKey(dataSource)]);
}

async function unlockMigrations(queryRunner: QueryRunner, dataSource: DataSource): Promise<void> {
  // A failed unlock means a broken connection, whose session lock ends with it: keep the original error.
  await queryRunner.query('SELECT pg_advisory_unlock(hashtext($1))', [lockKey(dataSource)]).catch(() => undefined);
}
