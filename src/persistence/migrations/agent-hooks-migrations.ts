/**
 * The migration list a host app adds to its own DataSource (`migrations: [...AGENT_HOOKS_MIGRATIONS]`) to
 * run them in its own pipeline, or runs with `runAgentHooksMigrations(dataSource)`. Either way they are
 * recorded in `agent_hooks_migrations` (agent-hooks-migration-record.ts), the one record of them.
 */
import { recordedOnce } from './agent-hooks-migration-record.js';
import { AgentHooksInitialSchema1764460800000 } from './1764460800000-agent-hooks-initial-schema.js';
import { AgentHooksThreadsAndCompaction1764979200000 } from './1764979200000-agent-hooks-threads-and-compaction.js';
import { AgentHooksIdempotencyDigest1765000000000 } from './1765000000000-agent-hooks-idempotency-digest.js';
import { AgentHooksClientTools1765100000000 } from './1765100000000-agent-hooks-client-tools.js';
import { AgentHooksDeferredClaims1765200000000 } from './1765200000000-agent-hooks-deferred-claims.js';
import { AgentHooksOutcomesAndSummaries1765300000000 } from './1765300000000-agent-hooks-outcomes-and-summaries.js';
import { AgentHooksOwedWork1765400000000 } from './1765400000000-agent-hooks-owed-work.js';
import { AgentHooksReceivedDeferredResults1765500000000 } from './1765500000000-agent-hooks-received-deferred-results.js';
import { AgentHooksOperationListIndex1765600000000 } from './1765600000000-agent-hooks-operation-list-index.js';
import { AgentHooksMessageSeq1765700000000 } from './1765700000000-agent-hooks-message-seq.js';
import { AgentHooksTraceContext1765800000000 } from './1765800000000-agent-hooks-trace-context.js';
import { AgentHooksTimelineIndex1765900000000 } from './1765900000000-agent-hooks-timeline-index.js';
import { AgentHooksTimelineToolCall1766000000000 } from './1766000000000-agent-hooks-timeline-tool-call.js';

const MIGRATIONS = [AgentHooksInitialSchema1764460800000, AgentHooksThreadsAndCompaction1764979200000, AgentHooksIdempotencyDigest1765000000000, AgentHooksClientTools1765100000000, AgentHooksDeferredClaims1765200000000, AgentHooksOutcomesAndSummaries1765300000000, AgentHooksOwedWork1765400000000, AgentHooksReceivedDeferredResults1765500000000, AgentHooksOperationListIndex1765600000000, AgentHooksMessageSeq1765700000000, AgentHooksTraceContext1765800000000, AgentHooksTimelineIndex1765900000000, AgentHooksTimelineToolCall1766000000000] as const;

export const AGENT_HOOKS_MIGRATIONS = MIGRATIONS.map(recordedOnce);

/** Applied migrations are recorded here, whoever runs them (a host's pipeline records them in its own table too). */
export { AGENT_HOOKS_MIGRATIONS_TABLE } from './agent-hooks-migration-record.js';
