/**
 * DESIGN §5: hand-written migrations create every `agent_hooks_` table on both drivers, match the
 * entities exactly, are idempotent and safe to run from several processes at once, and can be reverted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { AGENT_HOOKS_ENTITIES, AGENT_HOOKS_TABLES } from '../../../src/persistence/agent-hooks-entities.js';
import { createDataSourceOptions } from '../../../src/persistence/data-source-options.js';
import { MessageStore } from '../../../src/persistence/message.store.js';
import { AgentHooksMessageSeq1765700000000 } from '../../../src/persistence/migrations/1765700000000-agent-hooks-message-seq.js';
import { HookOutcomeStore } from '../../../src/persistence/hook-outcome.store.js';
import { AgentHooksTimelineIndex1765900000000 } from '../../../src/persistence/migrations/1765900000000-agent-hooks-timeline-index.js';
import { OperationStore } from '../../../src/persistence/operation.store.js';
import type { NewHookOutcome } from '../../../src/persistence/records.js';
import { AGENT_HOOKS_MIGRATIONS, AGENT_HOOKS_MIGRATIONS_TABLE } from '../../../src/persistence/migrations/agent-hooks-migrations.js';
import { pendingAgentHooksMigrations, runAgentHooksMigrations } from '../../../src/persistence/run-migrations.js';
import { driverSuites, DATABASE_URL, listTables, postgresDatabaseOption, testDrivers, uniqueSchemaName, useTestDatabase } from './test-databases.js';

const DRIVERS = await testDrivers();
const describeEachDriver = await driverSuites();
/** Every migration we ship, in order: each applied exactly once. */
const ALL_MIGRATION_NAMES = AGENT_HOOKS_MIGRATIONS.map((migration) => new migration().name);

describeEachDriver('migrations on %s', (driver) => {
  const db = useTestDatabase(driver);

  it('create every agent_hooks_ table and record themselves', async () => {
    const names = await listTables(db.dataSource);
    for (const table of AGENT_HOOKS_TABLES) expect(names).toContain(table);
    expect(names).toContain(AGENT_HOOKS_MIGRATIONS_TABLE);
    expect(names.every((name) => name.startsWith('agent_hooks_'))).toBe(true);
    const applied = await db.dataSource.query(`SELECT name FROM ${db.schema ? `"${db.schema}".` : ''}"${AGENT_HOOKS_MIGRATIONS_TABLE}"`);
    expect(applied.map((row: { name: string }) => row.name)).toEqual(ALL_MIGRATION_NAMES);
  });

  it('match the entities column for column (the schema builder finds nothing to change)', async () => {
    const pending = await db.dataSource.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((query) => query.query)).toEqual([]);
  });

  it('apply nothing the second time', async () => {
    await expect(runAgentHooksMigrations(db.dataSource)).resolves.toEqual([]);
  });

  it('start the message counter of an existing operation at its last message (issue 14 backfill)', async () => {
    const operations = new OperationStore(db.handle);
    const messages = new MessageStore(db.handle);
    const { operation } = await operations.create({ agentId: 'a', prompt: 'go' });
    await messages.append(operation.id, [
      { role: 'assistant', content: 'one' },
      { role: 'user', content: 'two' },
    ]);
    const queryRunner = db.dataSource.createQueryRunner();
    try {
      const counter = new AgentHooksMessageSeq1765700000000();
      await counter.down(queryRunner);
      await counter.up(queryRunner);
    } finally {
      await queryRunner.release();
    }
    const [appended] = await messages.append(operation.id, [{ role: 'user', content: 'three' }]);
    expect(appended!.seq).toBe(4);
  });

  it('1765900000000 down(): the timeline counters catch up with the rows SQLite numbered without them, so an older version numbers on without a duplicate', async () => {
    const operations = new OperationStore(db.handle);
    const outcomes = new HookOutcomeStore(db.handle);
    const { operation } = await operations.create({ agentId: 'a', prompt: 'go' });
    const row = (hookId: string): NewHookOutcome => ({ operationId: operation.id, at: new Date().toISOString(), point: 'afterToolCall', hookId, source: 'caller', outcome: 'ok', latencyMs: 0 });
    await outcomes.append([row('a'), row('b'), row('c')]);
    const queryRunner = db.dataSource.createQueryRunner();
    const counters = `${db.schema ? `"${db.schema}".` : ''}"agent_hooks_timeline_counters"`;
    try {
      const migration = new AgentHooksTimelineIndex1765900000000();
      await migration.down(queryRunner);
      const [counter] = (await db.dataSource.query(`SELECT "last_seq" FROM ${counters} WHERE "operation_id" = '${operation.id}'`)) as Array<{ last_seq: number | string }>;
      expect(Number(counter!.last_seq)).toBe(3);
      await migration.up(queryRunner);
    } finally {
      await queryRunner.release();
    }
  });

  it('revert with down() and apply again with up()', async () => {
    const queryRunner = db.dataSource.createQueryRunner();
    try {
      const migrations = AGENT_HOOKS_MIGRATIONS.map((Class) => new Class());
      for (const migration of [...migrations].reverse()) await migration.down(queryRunner);
      const afterDown = await listTables(db.dataSource);
      for (const table of AGENT_HOOKS_TABLES) expect(afterDown).not.toContain(table);
      for (const migration of migrations) await migration.up(queryRunner);
      const afterUp = await listTables(db.dataSource);
      for (const table of AGENT_HOOKS_TABLES) expect(afterUp).toContain(table);
    } finally {
      await queryRunner.release();
    }
  });
});

if (DRIVERS.includes('postgres')) {
  describe('migrations on postgres, several processes at once', () => {
    const schema = uniqueSchemaName();
    const sources: DataSource[] = [];

    afterAll(async () => {
      await sources[0]?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await Promise.all(sources.map((source) => source.destroy()));
    });

    it('take turns: one applies, the others find it applied, none fails', async () => {
      for (let i = 0; i < 3; i += 1) {
        sources.push(await new DataSource(createDataSourceOptions(postgresDatabaseOption(schema))).initialize());
      }
      const results = await Promise.all(sources.map((source) => runAgentHooksMigrations(source)));
      expect(results.flat()).toEqual(ALL_MIGRATION_NAMES);
      expect(await listTables(sources[0]!)).toEqual(expect.arrayContaining([...AGENT_HOOKS_TABLES]));
    });
  });
}

describe('migrations on a host DataSource', () => {
  it('run ours even when the host lists other migrations, recorded in agent_hooks_migrations (the one table)', async () => {
    const host = new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
      entities: [...AGENT_HOOKS_ENTITIES],
      migrations: [],
    });
    await host.initialize();
    try {
      await expect(runAgentHooksMigrations(host)).resolves.toEqual(ALL_MIGRATION_NAMES);
      const names = await listTables(host);
      expect(names).toEqual(expect.arrayContaining([...AGENT_HOOKS_TABLES, AGENT_HOOKS_MIGRATIONS_TABLE]));
      expect(names).not.toContain('migrations');
    } finally {
      await host.destroy();
    }
  });

  it.each(DRIVERS)('%s: migrated through a URL, then by a host pipeline listing AGENT_HOOKS_MIGRATIONS: nothing is applied twice', async (driver) => {
    const { ours, host, close } = await switchingSources(driver);
    try {
      await runAgentHooksMigrations(ours);
      await expect(host.runMigrations({ transaction: 'all' })).resolves.toBeDefined();
      await expect(pendingAgentHooksMigrations(host)).resolves.toEqual([]);
    } finally {
      await close();
    }
  });

  it.each(DRIVERS)('%s: migrated by a host pipeline (its own migrations table), then through a URL: nothing is applied twice', async (driver) => {
    const { ours, host, table, close } = await switchingSources(driver);
    try {
      await host.runMigrations({ transaction: 'all' });
      await expect(pendingAgentHooksMigrations(host)).resolves.toEqual([]);
      await expect(runAgentHooksMigrations(ours)).resolves.toEqual([]);
      const recorded = await ours.query(`SELECT name FROM ${table} ORDER BY id`);
      expect(recorded.map((row: { name: string }) => row.name)).toEqual(ALL_MIGRATION_NAMES);
    } finally {
      await close();
    }
  });

  it('synchronize (unit tests only) builds the same tables from the entities alone', async () => {
    const source = new DataSource({ type: 'better-sqlite3', database: ':memory:', entities: [...AGENT_HOOKS_ENTITIES], synchronize: true });
    await source.initialize();
    try {
      expect(await listTables(source)).toEqual([...AGENT_HOOKS_TABLES].sort());
    } finally {
      await source.destroy();
    }
  });
});

/**
 * One database seen two ways: our DataSource (a URL; records in agent_hooks_migrations) and a host's, whose
 * pipeline lists AGENT_HOOKS_MIGRATIONS and records in its own `migrations` table.
 */
async function switchingSources(driver: 'sqlite' | 'postgres'): Promise<{ ours: DataSource; host: DataSource; table: string; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'agent-hooks-switch-'));
  const schema = driver === 'postgres' ? uniqueSchemaName() : undefined;
  const url = driver === 'postgres' ? postgresDatabaseOption(schema!) : `sqlite:${join(dir, 'db.sqlite')}`;
  const ours = await new DataSource(createDataSourceOptions(url)).initialize();
  if (schema) await ours.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  const host = await new DataSource(
    driver === 'postgres'
      ? { type: 'postgres', url: DATABASE_URL, schema, entities: [...AGENT_HOOKS_ENTITIES], migrations: [...AGENT_HOOKS_MIGRATIONS] }
      : { type: 'better-sqlite3', database: join(dir, 'db.sqlite'), entities: [...AGENT_HOOKS_ENTITIES], migrations: [...AGENT_HOOKS_MIGRATIONS] },
  ).initialize();
  return {
    ours,
    host,
    table: `${schema ? `"${schema}".` : ''}"${AGENT_HOOKS_MIGRATIONS_TABLE}"`,
    close: async () => {
      if (schema) await ours.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await Promise.all([ours.destroy(), host.destroy()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// Referenced so the URL the suite targets shows up in a failure message.
test('DATABASE_URL is a postgres URL', () => {
  expect(new URL(DATABASE_URL).protocol).toMatch(/^postgres(ql)?:$/);
});
