/**
 * The host's one TypeORM DataSource (PostgreSQL): its own entity and migration beside nest-agent-hooks'
 * (`AGENT_HOOKS_ENTITIES`, `AGENT_HOOKS_MIGRATIONS`), so `database: 'host'` keeps the agents' tables in
 * the host's database and one migration pipeline (`npm run migrate`) creates both.
 */
import { AGENT_HOOKS_ENTITIES, AGENT_HOOKS_MIGRATIONS } from 'nest-agent-hooks';
import { DataSource } from 'typeorm';
import { CreateRefunds1766000000000 } from './migrations/1766000000000-create-refunds.js';
import { Refund } from './refund.entity.js';

export function createDataSource(): DataSource {
  return new DataSource({
    type: 'postgres',
    url: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    // Where the tables live (its own schema per deployment, or per test run).
    schema: process.env.DATABASE_SCHEMA ?? 'public',
    entities: [Refund, ...AGENT_HOOKS_ENTITIES],
    migrations: [CreateRefunds1766000000000, ...AGENT_HOOKS_MIGRATIONS],
    synchronize: false,
    logging: false,
  });
}
