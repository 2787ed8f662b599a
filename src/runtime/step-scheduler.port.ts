/**
 * Who runs the steps of an operation (DESIGN §4), one port for both modes: local mode drives them in this
 * process under the operation's lease (`LocalStepScheduler`, local-step-scheduler.ts); queue mode hands
 * each step to BullMQ, where any worker takes the lease and runs it (`QueuedStepScheduler`,
 * queue/queued-step-scheduler.ts). The runtime (`OperationStart`) never asks which one it has: it calls
 * these four methods, and the scheduler calls back into it through `StepHost` — `on_run_start`, the
 * terminal transition, the sub-agent bridge a step needs — so the scheduler never depends on the runtime.
 */
import type { TerminalReason } from '../hooks/agent-events.js';
import type { LiveOperation } from './live-operation.js';
import type { NewOperationLease, StoredOperation } from './runtime-store.port.js';
import type { SubAgents } from './sub-agent.port.js';

/** What a scheduler needs of the runtime whose steps it runs. */
export interface StepHost extends SubAgents {
  /** `on_run_start` once per operation; `leaseOwner` fences its commit. */
  runStart(operationId: string, live: LiveOperation, leaseOwner?: string): Promise<void>;
  /** The terminal transition and sequence; `leaseOwner`: a step's own end, made only while it holds the lease. */
  finish(operationId: string, live: LiveOperation, reason: TerminalReason, leaseOwner?: string): Promise<void>;
}

export interface StepScheduler {
  /**
   * The lease a new operation is created with, when this scheduler drives it in this process at once
   * (local mode); undefined when another process will take it (queue mode).
   */
  leaseAtCreate?(): NewOperationLease | undefined;
  /**
   * A new operation of this process: `on_run_start`, then its steps. `created`: it was created under the
   * lease `leaseAtCreate` gave, as `operation` (nothing to take or read first).
   */
  begin(operationId: string, live: LiveOperation, host: StepHost, created?: { operation: StoredOperation; leaseOwner: string }): void;
  /** A commit of this process (a decision, a deferred result) made the operation runnable again. */
  goOn(operationId: string, live: LiveOperation, host: StepHost): Promise<void>;
  /**
   * A decision made the operation runnable; `notify` delivers its owed notification. Local mode takes the
   * lease first, so no reconciler drives the approved call while a slow notification is delivered.
   */
  goOnAfter(notify: () => Promise<void>, operationId: string, live: LiveOperation, host: StepHost): Promise<void>;
  /** The reconciler found a running operation nobody holds (its process died, or it handed the step back). */
  adopt(operationId: string, host: StepHost): Promise<void>;
}

export const STEP_SCHEDULER = Symbol('nest-agent-hooks:StepScheduler');
