/**
 * Opens the agent-hooks database for the `database` option (see `data-source-options.ts`): creates a
 * SQLite file's folder, connects, and applies pending migrations (DESIGN §5: at start, never
 * `synchronize`). A failed migration closes the connection again before rethrowing.
 */
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { DataSource } from 'typeorm';
import {
  createDataSourceOptions,
  type AgentHooksDatabaseOption,
  type DataSourceOptionsSettings,
} from './data-source-options.js';
import { runAgentHooksMigrations } from './run-migrations.js';

export interface OpenDataSourceSettings extends DataSourceOptionsSettings {
  /** Apply pending migrations after connecting. Default true. */
  migrate?: boolean;
}

export async function openAgentHooksDataSource(
  database?: AgentHooksDatabaseOption,
  settings: OpenDataSourceSettings = {},
): Promise<DataSource> {
  const options = createDataSourceOptions(database, settings);
  if (options.type === 'better-sqlite3' && options.database !== ':memory:') {
    await mkdir(dirname(options.database), { recursive: true });
  }
  const dataSource = await new DataSource(options).initialize();
  if (settings.migrate === false) return dataSource;
  try {
    await runAgentHooksMigrations(dataSource);
  } catch (error) {
    await dataSource.destroy().catch(() => undefined);
    throw error;
  }
  return dataSource;
}
