/**
 * Who runs the next step of an operation (DESIGN §4). Without a scheduler (local mode) the runtime drives
 * its operations in this process; with one (queue mode) it hands every step to the scheduler — a BullMQ
 * job any worker may run — and waits for the database to show the outcome. `version` is the operation's
 * version the step starts from: the scheduler may use it to de-duplicate.
 */
export interface StepScheduler {
  schedule(operationId: string, version: number): Promise<void>;
}

export const STEP_SCHEDULER = Symbol('nest-agent-hooks:StepScheduler');

/** What a worker passes when it runs one scheduled step. */
export interface QueuedStepContext {
  /** The worker's lease owner id: every commit of the step is fenced by it. */
  leaseOwner: string;
  /** Aborted when the worker stops or the operation was cancelled elsewhere. */
  signal: AbortSignal;
}
