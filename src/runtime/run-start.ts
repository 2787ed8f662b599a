/**
 * `on_run_start` runs once per operation, before its first step (SPEC A3), and its end is committed even
 * when it changed nothing (`OperationStart.runStart`): an operation still at its first version never ran
 * it, so whichever process takes it over after its creator died runs it first (G2). When nothing in a
 * process that runs it under a lease (its first step follows there) observes it, nothing runs and nothing
 * is committed: the first step's commit is the first version bump, and a takeover before it runs the point
 * for what that process observes. Queue mode's creator always commits it.
 */

/** The version of a new operation, until its `on_run_start` committed. */
export const FIRST_VERSION = 1;

/** Whether an operation's `on_run_start` never ran: nothing was committed on it since it was created. */
export function neverStarted(operation: { version: number; stepIndex: number }): boolean {
  return operation.version === FIRST_VERSION && operation.stepIndex === 0;
}
