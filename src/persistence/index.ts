/**
 * The persistence room's public surface (DESIGN §5): entities, migrations, the `database` option, and the
 * stores the runtime and queue rooms use. `src/index.ts` re-exports what a host app needs.
 */
export { AGENT_HOOKS_ENTITIES, AGENT_HOOKS_TABLES } from './agent-hooks-entities.js';
export { OperationEntity } from './entities/operation.entity.js';
export { OperationCallerHookEntity } from './entities/operation-caller-hook.entity.js';
export { MessageEntity } from './entities/message.entity.js';
export { InterventionEntity } from './entities/intervention.entity.js';
export { ToolResultPlaceholderEntity } from './entities/tool-result-placeholder.entity.js';
export { HookOutcomeEntity } from './entities/hook-outcome.entity.js';

export { AGENT_HOOKS_MIGRATIONS, AGENT_HOOKS_MIGRATIONS_TABLE } from './migrations/agent-hooks-migrations.js';
export { AgentHooksInitialSchema1764460800000 } from './migrations/1764460800000-agent-hooks-initial-schema.js';
export { AgentHooksThreadsAndCompaction1764979200000 } from './migrations/1764979200000-agent-hooks-threads-and-compaction.js';
export { OperationWaitStore } from './operation-wait.store.js';
export type { PublishDeferredResult } from './operation-wait.store.js';
export { runAgentHooksMigrations, pendingAgentHooksMigrations } from './run-migrations.js';
export { hostDataSource } from './host-data-source.js';
export {
  createDataSourceOptions,
  isHostDatabase,
  DEFAULT_DATABASE,
  HOST_DATABASE,
  SQLITE_BUSY_TIMEOUT_MS,
} from './data-source-options.js';
export type { AgentHooksDatabaseOption, DataSourceOptionsSettings } from './data-source-options.js';
export { openAgentHooksDataSource } from './open-data-source.js';
export type { OpenDataSourceSettings } from './open-data-source.js';
export { dialectOf } from './dialect.js';
export type { SqlDialect } from './dialect.js';

export { OperationStore } from './operation.store.js';
export type { NewOperation, CreatedOperation, TerminalError } from './operation.store.js';
export { CallerHookStore } from './caller-hook.store.js';
export { MessageStore } from './message.store.js';
export { StepCommitStore, STEP_COMMIT_FAILPOINTS, NO_STEP_COMMIT_FAILPOINTS } from './step-commit.store.js';
export type {
  OperationPatch,
  StepCommit,
  StepCommitResult,
  ToolResultPublish,
  StepCommitFailpoints,
  StepCommitOptions,
} from './step-commit.store.js';
export { OperationLeaseStore } from './operation-lease.store.js';
export type { Lease } from './operation-lease.store.js';
export { InterventionStore } from './intervention.store.js';
export type { InterventionDecision } from './intervention.store.js';
export { ToolResultPlaceholderStore } from './tool-result-placeholder.store.js';
export { HookOutcomeStore } from './hook-outcome.store.js';
export type { TimelinePage } from './hook-outcome.store.js';
export { OutcomeBatcher } from './outcome-batcher.js';
export type { OutcomeBatcherOptions, OutcomeWriter } from './outcome-batcher.js';
export { RetentionStore } from './retention.store.js';
export type { PurgeCounts, PurgeOptions } from './retention.store.js';
export type { StoreOptions } from './store-options.js';
export { toStoredRunContext } from './run-context-snapshot.js';
export type { RunContextSource } from './run-context-snapshot.js';
export { StaleOperationError, OperationNotFoundError, DatabaseConfigError } from './persistence-errors.js';
export type * from './records.js';
