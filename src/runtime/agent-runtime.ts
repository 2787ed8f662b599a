/**
 * The public runtime API (DESIGN §6): `execAgent`, `run`, `cancel`, `approve`, `reject`, `completeDeferred`,
 * `result`, delegating to `OperationRunner` (operation-runner.ts), which does the work.
 */
import { Injectable } from '@nestjs/common';
import type { AgentHook } from '../hooks/agent-hook.js';
import type { RunContext } from '../hooks/contexts.js';
import { OperationRunner, type ExecAgentInput, type OperationResult } from './operation-runner.js';

export type { ExecAgentInput, OperationResult } from './operation-runner.js';

/**
 * What a host gets from `app.get(AgentRuntime)` (DESIGN §6): a thin facade, so the runner's internal entry
 * points (sub-agent start, queued steps, owed terminal sequences) are not part of the public surface.
 */
@Injectable()
export class AgentRuntime {
  constructor(private readonly runner: OperationRunner) {}

  /** Starts an operation; `done` resolves with `{ status: 'completed', reason }` whatever the reason. */
  execAgent(input: ExecAgentInput): Promise<{ operationId: string; done: Promise<OperationResult> }> {
    return this.runner.execAgent(input);
  }

  /** Runs to the end; resolves on reason `done`, else rejects with the original error or a typed one. */
  run(message: string, options: { agentId: string; context?: RunContext; hooks?: AgentHook[] }): Promise<OperationResult> {
    return this.runner.run(message, options);
  }

  /** Cancels an operation; its terminal sequence runs once, reason `interrupted`. */
  cancel(operationId: string): Promise<void> {
    return this.runner.cancel(operationId);
  }

  /**
   * Approves a pending call (SPEC A3). With `args` (F6) the call runs with them instead of the model's: they
   * are checked against the tool's JSON Schema first (`InvalidEditedArgumentsError`, nothing stored).
   */
  approve(operationId: string, toolCallId: string, options: { decidedBy?: string; args?: Record<string, unknown> } = {}): Promise<void> {
    return this.runner.approve(operationId, toolCallId, options);
  }

  /** Rejects a pending call: stops the operation (default) or continues with the rejection as the result. */
  reject(operationId: string, toolCallId: string, options: { reason?: string; continue?: boolean; decidedBy?: string } = {}): Promise<void> {
    return this.runner.reject(operationId, toolCallId, options);
  }

  /** Supplies a deferred call's result; the first final write wins (L4). */
  completeDeferred(operationId: string, toolCallId: string, result: { content: string; success?: boolean }): Promise<{ published: true }> {
    return this.runner.completeDeferred(operationId, toolCallId, result);
  }

  /** Resolves with the operation's result once it is completed, here or in another process. */
  result(operationId: string): Promise<OperationResult> {
    return this.runner.result(operationId);
  }
}
