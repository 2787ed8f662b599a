/**
 * The migration list a host app adds to its own DataSource (`migrations: [...AGENT_HOOKS_MIGRATIONS]`) to
 * run them in its own pipeline, or runs with `runAgentHooksMigrations(dataSource)`.
 */
import { AgentHooksInitialSchema1764460800000 } from './1764460800000-agent-hooks-initial-schema.js';
import { AgentHooksThreadsAndCompaction1764979200000 } from './1764979200000-agent-hooks-threads-and-compaction.js';
import { AgentHooksIdempotencyDigest1765000000000 } from './1765000000000-agent-hooks-idempotency-digest.js';
import { AgentHooksClientTools1765100000000 } from './1765100000000-agent-hooks-client-tools.js';
import { AgentHooksDeferredClaims1765200000000 } from './1765200000000-agent-hooks-deferred-claims.js';

export const AGENT_HOOKS_MIGRATIONS = [AgentHooksInitialSchema1764460800000, AgentHooksThreadsAndCompaction1764979200000, AgentHooksIdempotencyDigest1765000000000, AgentHooksClientTools1765100000000, AgentHooksDeferredClaims1765200000000] as const;

/** Our own DataSources record applied migrations here, apart from a host's `migrations` table. */
export const AGENT_HOOKS_MIGRATIONS_TABLE = 'agent_hooks_migrations';
