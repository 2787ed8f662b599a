/** Errors `runtime.run()` rejects with when an operation ends other than `done` (DESIGN §3). */
import type { TerminalReason } from '../hooks/agent-events.js';

export class UnknownAgentError extends Error {
  override readonly name = 'UnknownAgentError';
  readonly code = 'unknown_agent';

  constructor(readonly agentId: string) {
    super(`unknown agent "${agentId}"`);
  }
}

/** `max_steps` or `cost_limit`. */
export class RunLimitError extends Error {
  override readonly name = 'RunLimitError';

  constructor(
    readonly reason: Extract<TerminalReason, 'max_steps' | 'cost_limit'>,
    readonly operationId: string,
  ) {
    super(reason === 'max_steps' ? `operation ${operationId} reached its step limit` : `operation ${operationId} reached its cost limit`);
  }
}

/** `interrupted`: cancelled, or stopped by a human. */
export class RunCancelledError extends Error {
  override readonly name = 'RunCancelledError';

  constructor(readonly operationId: string) {
    super(`operation ${operationId} was interrupted`);
  }
}

/** An operation that ended with reason `error` in another process: only its error type is known here. */
export class RunFailedError extends Error {
  override readonly name = 'RunFailedError';

  constructor(
    readonly operationId: string,
    readonly errorType: string,
  ) {
    super(`operation ${operationId} failed (${errorType})`);
  }
}
