/**
 * The host's migration pipeline (`npm run migrate`, before `npm start`): its own migrations and
 * nest-agent-hooks' in one run. The runtime checks at start that ours were applied; it never runs them on
 * a host's DataSource.
 */
import 'reflect-metadata';
import { createDataSource } from './database/data-source.js';

const dataSource = await createDataSource().initialize();
try {
  const schema = dataSource.driver.schema;
  // TypeORM keeps its migrations table in the schema: it must exist first.
  if (schema) await dataSource.query(`CREATE SCHEMA IF NOT EXISTS "${schema.replaceAll('"', '""')}"`);
  const applied = await dataSource.runMigrations({ transaction: 'all' });
  console.log(`migrations applied: ${applied.length === 0 ? 'none (up to date)' : applied.map((migration) => migration.name).join(', ')}`);
} finally {
  await dataSource.destroy();
}
