/**
 * Every store of the runtime's database, built once on one `StoreDatabase` handle when the DataSource opens
 * (`RuntimeDatabase.stores()`): they share its SQLite gate and its `committed$` events. This is the only
 * place the runtime's stores are built; the runtime's ports (`SqlRuntimeStore`, `SqlOperationLeases`),
 * the server's read port (`SqlOperationReads`), the retention scheduler and `agentctl purge` take them from the bundle.
 */
import type { DataSource } from 'typeorm';
import { CallerHookStore } from './caller-hook.store.js';
import { HookOutcomeStore } from './hook-outcome.store.js';
import { InterventionStore } from './intervention.store.js';
import { MessageStore } from './message.store.js';
import { OperationLeaseStore } from './operation-lease.store.js';
import { OperationWaitStore } from './operation-wait.store.js';
import { OperationStore } from './operation.store.js';
import { OutcomeBatcher } from './outcome-batcher.js';
import { OwedWorkStore } from './owed-work.store.js';
import { RetentionStore } from './retention.store.js';
import type { SqlSessionWrapper } from './sql-session.js';
import { StepCommitStore } from './step-commit.store.js';
import { StepStateStore } from './step-state.store.js';
import { StoreDatabase } from './store-database.js';
import { ToolResultPlaceholderStore } from './tool-result-placeholder.store.js';

export interface RuntimeStores {
  dataSource: DataSource;
  /** The one handle every store below is built on. */
  database: StoreDatabase;
  operations: OperationStore;
  callerHooks: CallerHookStore;
  messages: MessageStore;
  commits: StepCommitStore;
  /** What a step begins with, kept from this process's own commits between steps. */
  stepStates: StepStateStore;
  outcomes: HookOutcomeStore;
  /** Buffers hook outcomes into `outcomes`; closed (flushed) before the DataSource goes. */
  timeline: OutcomeBatcher;
  interventions: InterventionStore;
  waits: OperationWaitStore;
  placeholders: ToolResultPlaceholderStore;
  owed: OwedWorkStore;
  leases: OperationLeaseStore;
  retention: RetentionStore;
}

export interface RuntimeStoresOptions {
  /** Tests wrap the stores' SQL session to fail a statement (`SQL_SESSION_WRAPPER`). */
  wrapSession?: SqlSessionWrapper;
}

/** A new handle on `dataSource` and every store on it. */
export function createRuntimeStores(dataSource: DataSource, options: RuntimeStoresOptions = {}): RuntimeStores {
  const database = new StoreDatabase(dataSource, options.wrapSession);
  const outcomes = new HookOutcomeStore(database);
  return {
    dataSource,
    database,
    operations: new OperationStore(database),
    callerHooks: new CallerHookStore(database),
    messages: new MessageStore(database),
    commits: new StepCommitStore(database, { timeline: outcomes }),
    stepStates: new StepStateStore(database),
    outcomes,
    timeline: new OutcomeBatcher(outcomes),
    interventions: new InterventionStore(database),
    waits: new OperationWaitStore(database),
    placeholders: new ToolResultPlaceholderStore(database),
    owed: new OwedWorkStore(database),
    leases: new OperationLeaseStore(database),
    retention: new RetentionStore(database),
  };
}
