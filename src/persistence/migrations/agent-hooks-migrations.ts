/**
 * The migration list a host app adds to its own DataSource (`migrations: [...AGENT_HOOKS_MIGRATIONS]`) to
 * run them in its own pipeline, or runs with `runAgentHooksMigrations(dataSource)`.
 */
import { AgentHooksInitialSchema1764460800000 } from './1764460800000-agent-hooks-initial-schema.js';
import { AgentHooksThreadsAndCompaction1764979200000 } from './1764979200000-agent-hooks-threads-and-compaction.js';

export const AGENT_HOOKS_MIGRATIONS = [AgentHooksInitialSchema1764460800000, AgentHooksThreadsAndCompaction1764979200000] as const;

/** Our own DataSources record applied migrations here, apart from a host's `migrations` table. */
export const AGENT_HOOKS_MIGRATIONS_TABLE = 'agent_hooks_migrations';
