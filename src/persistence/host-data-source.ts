/**
 * `database: 'host'` (DESIGN §6): the runtime works in the host app's default TypeORM DataSource — the one
 * `TypeOrmModule.forRoot` (or a plain `{ provide: DataSource, … }` provider) registers under the
 * `DataSource` class token. The host owns it: it lists `AGENT_HOOKS_ENTITIES` in its `entities`, runs
 * `AGENT_HOOKS_MIGRATIONS` in its own pipeline, and opens and closes it. We only look it up and check it,
 * so a misconfigured host fails at first use with an error that says what to add.
 */
import type { ModuleRef } from '@nestjs/core';
import { DataSource, InstanceChecker } from 'typeorm';
import { AGENT_HOOKS_ENTITIES } from './agent-hooks-entities.js';
import { SUPPORTED_DRIVERS } from './dialect.js';
import { DatabaseConfigError } from './persistence-errors.js';
import { pendingAgentHooksMigrations } from './run-migrations.js';

/** The host's default DataSource, initialized, with our entities registered and our migrations applied. */
export async function hostDataSource(moduleRef: ModuleRef): Promise<DataSource> {
  const dataSource = lookUp(moduleRef);
  const driver = dataSource.options.type;
  if (!(SUPPORTED_DRIVERS as readonly string[]).includes(driver)) {
    throw new DatabaseConfigError(
      `database: 'host': the host's DataSource uses the '${String(driver)}' driver; nest-agent-hooks supports ${SUPPORTED_DRIVERS.map((name) => `'${name}'`).join(' and ')}`,
    );
  }
  if (!dataSource.isInitialized) {
    throw new DatabaseConfigError("database: 'host': the host's DataSource is not initialized; initialize it in its provider (TypeOrmModule does)");
  }
  const missing = AGENT_HOOKS_ENTITIES.filter((entity) => !dataSource.hasMetadata(entity)).map((entity) => entity.name);
  if (missing.length > 0) {
    throw new DatabaseConfigError(
      `database: 'host': the host's DataSource does not list our entities (${missing.join(', ')}); add ...AGENT_HOOKS_ENTITIES to its entities`,
    );
  }
  const pending = await pendingAgentHooksMigrations(dataSource);
  if (pending.length > 0) {
    throw new DatabaseConfigError(
      `database: 'host': migrations not applied to the host's DataSource (${pending.join(', ')}); add ...AGENT_HOOKS_MIGRATIONS to its migrations and run them in the host's pipeline (or call runAgentHooksMigrations(dataSource))`,
    );
  }
  return dataSource;
}

function lookUp(moduleRef: ModuleRef): DataSource {
  let found: unknown;
  try {
    found = moduleRef.get(DataSource, { strict: false });
  } catch {
    found = undefined;
  }
  // TypeORM's own brand check: whatever else sits under the token (a stub, a wrong value) is refused.
  if (!InstanceChecker.isDataSource(found)) {
    throw new DatabaseConfigError(
      "database: 'host' needs the host app's default TypeORM DataSource, provided under the DataSource class token (TypeOrmModule.forRoot does this); none was found",
    );
  }
  return found;
}
