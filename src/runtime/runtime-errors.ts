/** Errors `runtime.run()` rejects with when an operation ends other than `done` (DESIGN §3). */
import type { ReachedLimit, TerminalReason } from '../hooks/agent-events.js';

export class UnknownAgentError extends Error {
  override readonly name = 'UnknownAgentError';
  readonly code = 'unknown_agent';

  constructor(readonly agentId: string) {
    super(`unknown agent "${agentId}"`);
  }
}

/**
 * `execAgent` / `run` (and the read API, DESIGN §12) before the application finished its bootstrap: `@Tool`
 * and `@OnHook` methods are discovered at init, so an operation started earlier would run without them.
 */
export class RuntimeNotReadyError extends Error {
  override readonly name = 'RuntimeNotReadyError';
  readonly code = 'runtime_not_ready';

  constructor() {
    super('AgentRuntime is not ready: the application has not finished its bootstrap, so no @Tool or @OnHook is registered yet; call app.init() (or app.listen()) before execAgent(), run() or reading operations');
  }
}

/**
 * SPEC G4: the application is closing, so no new step is taken (a start, a decision that would resume).
 * Also the abort reason of a step cut at the end of the shutdown grace period: a tool call cut by it
 * publishes nothing (its client is about to close), the step is handed back.
 */
export class RuntimeShuttingDownError extends Error {
  override readonly name = 'RuntimeShuttingDownError';
  readonly code = 'shutting_down';

  constructor() {
    super('AgentRuntime is shutting down: it takes no new steps');
  }
}

/** `blocked`: a model-call control denied the model's call or its answer (SPEC K3). */
export class RunBlockedError extends Error {
  override readonly name = 'RunBlockedError';
  readonly code = 'blocked';

  constructor(readonly operationId: string) {
    super(`operation ${operationId} was blocked by a model-call hook`);
  }
}

/** `max_steps`, `cost_limit`, `token_limit` or `tool_limit`; `limit` names the limit when it is known (F4, F5). */
export class RunLimitError extends Error {
  override readonly name = 'RunLimitError';

  constructor(
    readonly reason: Extract<TerminalReason, 'max_steps' | 'cost_limit' | 'token_limit' | 'tool_limit'>,
    readonly operationId: string,
    readonly limit?: ReachedLimit,
  ) {
    super(`operation ${operationId} reached its ${LIMIT_WORDS[reason]} limit${limit ? ` (${limit.name})` : ''}`);
  }
}

const LIMIT_WORDS = { max_steps: 'step', cost_limit: 'cost', token_limit: 'token', tool_limit: 'tool call' } as const;

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

/** A store refused a commit: another writer changed the operation first (optimistic versioning), or it is completed, or the lease moved on. */
export class StaleOperationError extends Error {
  override readonly name = 'StaleOperationError';
  readonly code = 'stale_operation';

  constructor(
    readonly operationId: string,
    readonly expectedVersion: number,
  ) {
    super(`operation ${operationId} is no longer at version ${expectedVersion} (changed by another writer, completed, or its lease is held by another worker)`);
  }
}

export class OperationNotFoundError extends Error {
  override readonly name = 'OperationNotFoundError';
  readonly code = 'operation_not_found';

  constructor(readonly operationId: string) {
    super(`operation ${operationId} does not exist`);
  }
}

/** No operation with this id (HTTP 404). */
export class UnknownOperationError extends Error {
  override readonly name = 'UnknownOperationError';
  readonly code = 'not_found';

  constructor(readonly operationId: string) {
    super(`operation ${operationId} does not exist`);
  }
}

/**
 * An approval's edited arguments (F6) are refused (HTTP 400): not an object, over the G6 limits, or not
 * what the tool's JSON Schema accepts. The message names the path and the rule, never a value; nothing was stored.
 */
export class InvalidEditedArgumentsError extends Error {
  override readonly name = 'InvalidEditedArgumentsError';
  readonly code = 'invalid_arguments';
}

/** No approval (or deferred call) with this tool call id in the operation (HTTP 404). */
export class UnknownInterventionError extends Error {
  override readonly name = 'UnknownInterventionError';
  readonly code = 'not_found';

  constructor(
    readonly operationId: string,
    readonly toolCallId: string,
    kind: 'approval' | 'deferred call',
  ) {
    super(`operation ${operationId} has no ${kind} for tool call ${toolCallId}`);
  }
}

/** The approval was already decided, or the operation is over (HTTP 409): never a second execution. */
export class InterventionNotPendingError extends Error {
  override readonly name = 'InterventionNotPendingError';
  readonly code = 'not_pending';

  constructor(
    readonly operationId: string,
    readonly toolCallId: string,
  ) {
    super(`tool call ${toolCallId} of operation ${operationId} is not waiting for a decision`);
  }
}

/** A deferred result arrived after the first final one (L4, HTTP 409): nothing was changed. */
export class AlreadyCompletedError extends Error {
  override readonly name = 'AlreadyCompletedError';
  readonly code = 'already_completed';

  constructor(
    readonly operationId: string,
    readonly toolCallId: string,
  ) {
    super(`tool call ${toolCallId} of operation ${operationId} already has its result`);
  }
}

/**
 * The operation is completed (any reason, cancellation included): a deferred result, an approval or a
 * rejection that arrives now publishes nothing (G5, HTTP 409). Decided in the write's own transaction.
 */
export class OperationCompletedError extends Error {
  override readonly name = 'OperationCompletedError';
  readonly code = 'operation_completed';

  constructor(
    readonly operationId: string,
    readonly toolCallId: string,
  ) {
    super(`operation ${operationId} is completed: nothing more is published for tool call ${toolCallId}`);
  }
}

/** `agents/call` nested deeper than the runtime allows (a sub-agent that keeps delegating). */
export class SubAgentDepthError extends Error {
  override readonly name = 'SubAgentDepthError';
  readonly code = 'sub_agent_depth';

  constructor(readonly maxDepth: number) {
    super(`sub-agents nest at most ${maxDepth} operations deep`);
  }
}

/**
 * G8: an idempotency key already names an operation created from a different request (HTTP 422). The
 * message names neither the key nor either request.
 */
export class IdempotencyKeyReusedError extends Error {
  override readonly name = 'IdempotencyKeyReusedError';
  readonly code = 'idempotency_key_reused';

  constructor() {
    super('this Idempotency-Key was already used with a different request');
  }
}

/**
 * A read of the list with a bad option (`runtime.list()`, DESIGN §12): a cursor this runtime did not issue,
 * a limit out of range, an unknown status. The message names the option, never its value.
 */
export class InvalidListQueryError extends Error {
  override readonly name = 'InvalidListQueryError';
  readonly code = 'invalid_query';

  constructor(
    readonly field: 'ownerId' | 'status' | 'agentId' | 'limit' | 'cursor',
    problem: string,
  ) {
    super(`list ${field}: ${problem}`);
  }
}
