/** What a caller of the dispatcher may say about one dispatch (every phase of it reads the same options). */
import type { RunContext } from './contexts.js';
import type { EnvironmentHooks } from './hook-ports.js';

export interface DispatchOptions {
  /** Whose caller hooks apply; agent-family events default to `payload.operationId`, engine ones to `runContext.runId`. */
  operationId?: string;
  /** Per-request identity for engine-family `HookInvocation.runContext`. */
  runContext?: RunContext;
  /** Cancels webhook deliveries; a cancelled control never grants permission (W12). */
  signal?: AbortSignal;
  /** `HookInvocation.metadata` (the engine's metadata). */
  metadata?: Readonly<Record<string, unknown>>;
  /**
   * The environment hooks as read at the start of the step (`environmentSnapshot()`, L1: each step and
   * each resume takes a fresh one). Without it, each dispatch reads the current environment.
   */
  environment?: EnvironmentHooks;
}

export const NO_OPTIONS: DispatchOptions = Object.freeze({});
