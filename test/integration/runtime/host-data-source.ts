/**
 * A host app's own TypeORM DataSource for `database: 'host'` tests: a SQLite file in a temporary folder or
 * a fresh PostgreSQL schema, opened the way a host opens it (its own entity list, its own migrations
 * table), migrated only when the host's pipeline would. `dispose()` is the host's own teardown.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource, type DataSourceOptions, type EntitySchema, type MixedList } from 'typeorm';
import { AGENT_HOOKS_ENTITIES } from '../../../src/persistence/agent-hooks-entities.js';
import { AGENT_HOOKS_MIGRATIONS } from '../../../src/persistence/migrations/agent-hooks-migrations.js';
import { DATABASE_URL, uniqueSchemaName, type DriverName } from '../persistence/test-databases.js';

export interface HostDataSourceSettings {
  /** Default: our entities, as the host is told to list them. */
  entities?: MixedList<string | (new () => unknown) | EntitySchema>;
  /** Run the host's migrations (ours among them) before the app starts. Default true. */
  migrate?: boolean;
}

export interface HostDatabase {
  readonly dataSource: DataSource;
  /** What the host's pipeline does: `dataSource.runMigrations()` over its own `migrations` list. */
  migrate(): Promise<void>;
  /** The host's teardown: drop the schema / remove the file, then close. */
  dispose(): Promise<void>;
}

export async function openHostDatabase(driver: DriverName, settings: HostDataSourceSettings = {}): Promise<HostDatabase> {
  const common = {
    entities: settings.entities ?? [...AGENT_HOOKS_ENTITIES],
    migrations: [...AGENT_HOOKS_MIGRATIONS],
    synchronize: false,
    logging: false,
  };
  let folder: string | undefined;
  let schema: string | undefined;
  let options: DataSourceOptions;
  if (driver === 'sqlite') {
    folder = await mkdtemp(join(tmpdir(), 'agent-hooks-host-'));
    options = { ...common, type: 'better-sqlite3', database: join(folder, 'host.sqlite') };
  } else {
    schema = uniqueSchemaName();
    options = { ...common, type: 'postgres', url: DATABASE_URL, schema, poolSize: 4 };
  }
  const dataSource = await new DataSource(options).initialize();
  if (schema) await dataSource.query(`CREATE SCHEMA "${schema}"`);
  const host: HostDatabase = {
    dataSource,
    migrate: async () => {
      await dataSource.runMigrations({ transaction: 'all' });
    },
    dispose: async () => {
      if (!dataSource.isInitialized) await dataSource.initialize();
      if (schema) await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await dataSource.destroy();
      if (folder) await rm(folder, { recursive: true, force: true });
    },
  };
  if (settings.migrate ?? true) await host.migrate();
  return host;
}
