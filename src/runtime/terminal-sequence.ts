/**
 * The terminal sequences of DESIGN §3, in one place, whoever runs them (the process that made the terminal
 * transition, or a reconciler that took an owed one over):
 * - reason `done`: `onComplete` → `on_run_end`;
 * - otherwise: `onError` (reason `error` only) → `onComplete` → `on_run_error`;
 * then what follows them: the sub-agent completion bridge (P5), the timeline written out, and the record that
 * nothing is owed any more. Hook failures here never mask the run's own outcome.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { TerminalReason } from '../hooks/agent-events.js';
import { RunEndContext, type RunContext } from '../hooks/contexts.js';
import { errorType } from '../hooks/hook-errors.js';
import { HookDispatcher } from '../hooks/hook-dispatcher.js';
import { agentEventBase } from './agent-event-base.js';
import type { LiveOperation } from './live-operation.js';
import type { OperationResult } from './operation-result.js';
import { AlreadyCompletedError, OperationCompletedError, RunBlockedError, RunCancelledError, RunLimitError } from './runtime-errors.js';
import { isLimitReason, storedLimit } from './run-limits.js';
import { RUNTIME_STORE, type RuntimeStore, type StoredMessage, type StoredOperation } from './runtime-store.port.js';

/**
 * A completed operation and its conversation, read once by whoever runs the whole terminal sequence: neither
 * changes after the terminal transition (G5), so the hooks and the result need not read them again.
 */
export interface CompletedState {
  operation: StoredOperation | null;
  messages: StoredMessage[];
}

/**
 * How a child's answer reaches its parent's `agents/call`: `OperationStart`'s deferred completion (through the
 * parent's after-hooks and the placeholder compare-and-set), passed in by whoever runs the sequence.
 */
export type ParentReport = (parentOperationId: string, parentToolCallId: string, result: { content: string; success: boolean }) => Promise<unknown>;

@Injectable()
export class TerminalSequence {
  private readonly logger = new Logger('AgentRuntime');

  constructor(
    private readonly dispatcher: HookDispatcher,
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
  ) {}

  /** The terminal hooks, each failure logged (type only) and the next one run; `read`: the operation as already read. */
  async hooks(operationId: string, live: Pick<LiveOperation, 'runContext' | 'startedAt' | 'steps'>, reason: TerminalReason, error: unknown, read?: CompletedState): Promise<void> {
    const operation = read ? read.operation : await this.store.getOperation(operationId);
    const base = agentEventBase({
      operationId,
      agentId: operation?.agentId ?? '',
      stepIndex: operation?.stepIndex ?? 0,
      ...(live.runContext.userId ? { userId: live.runContext.userId } : {}),
      ...(operation?.parentOperationId ? { parentOperationId: operation.parentOperationId } : {}),
      ...(operation?.threadId ? { threadId: operation.threadId } : {}),
    });
    const options = { operationId, runContext: live.runContext };
    const safely = async (work: () => Promise<unknown>) => {
      try {
        await work();
      } catch (failure) {
        this.logger.warn(`terminal hook for ${operationId} failed (${errorType(failure)})`);
      }
    };
    if (reason === 'done') {
      await safely(() => this.dispatcher.dispatch('onComplete', { ...base, type: 'onComplete', reason }, options));
      const messages = read ? read.messages : await this.store.messages(operationId);
      await safely(() =>
        this.dispatcher.dispatch(
          'on_run_end',
          new RunEndContext({
            runId: operationId,
            status: 'completed',
            durationMs: performance.now() - live.startedAt,
            steps: operation?.stepIndex ?? live.steps,
            toolCalls: messages.filter((m) => m.role === 'tool').length,
          }),
          options,
        ),
      );
      return;
    }
    if (reason === 'error') {
      await safely(() =>
        this.dispatcher.dispatch(
          'onError',
          {
            ...base,
            type: 'onError',
            errorMessage: error instanceof Error ? error.message : String(error),
            errorType: errorType(error),
            ...(typeof (error as { code?: unknown })?.code === 'string' ? { errorCode: (error as { code: string }).code } : {}),
          },
          options,
        ),
      );
    }
    // F4/F5: a limit's reason names the limit, as stored with the transition (whoever runs the sequence).
    const limit = isLimitReason(reason) ? storedLimit(operation) : undefined;
    await safely(() => this.dispatcher.dispatch('onComplete', { ...base, type: 'onComplete', reason, ...(limit ? { limit } : {}) }, options));
    const raised =
      reason === 'error'
        ? toError(error)
        : reason === 'interrupted'
          ? new RunCancelledError(operationId)
          : reason === 'blocked'
            ? new RunBlockedError(operationId)
            : new RunLimitError(reason, operationId, limit);
    // on_run_error never propagates and never masks the original error (E2).
    await safely(() => this.dispatcher.dispatch('on_run_error', raised, options));
  }

  /**
   * Whether anything here observes a terminal point (a hook of any family, an `events$` subscriber): if not,
   * the sequence has nothing a crash could lose, and the transition may record it done (`TerminalHold.nothingOwed`).
   */
  observed(operationId: string, runContext: RunContext): boolean {
    // The environment's hooks read once for the four points (L1: a read of the current environment).
    const options = { operationId, runContext, environment: this.dispatcher.environmentSnapshot() };
    return TERMINAL_POINTS.some((point) => this.dispatcher.isObserved(point, options));
  }

  /**
   * What follows the terminal hooks, and then the record that nothing is owed: the sub-agent bridge, the
   * timeline written out. If the process dies before the record, a reconciler runs the sequence again
   * (`OwedWork.runOwedTerminalSequences`): at least once, never lost. `recorded`: the transition recorded it.
   */
  async after(operation: StoredOperation, result: OperationResult, report: ParentReport, recorded = false): Promise<void> {
    const bridged = operation.parentOperationId && operation.parentToolCallId ? await this.bridge(operation.parentOperationId, operation.parentToolCallId, result, report) : true;
    await this.store.flushTimeline().catch((error: unknown) => this.logger.warn(`timeline flush failed (${errorType(error)})`));
    if (bridged && !recorded) await this.store.markTerminalHooksDone(operation.id).catch((error: unknown) => this.logger.warn(`could not record the end of ${operation.id} (${errorType(error)})`));
  }

  /**
   * The completion bridge (P5): a child's final answer becomes the parent's `agents/call` result — through
   * the parent's after-hooks and the placeholder compare-and-set, like any deferred result. The child has
   * already reported its own `onComplete`. A parent that already has the result, or has ended, keeps it.
   */
  private async bridge(parentOperationId: string, parentToolCallId: string, result: OperationResult, report: ParentReport): Promise<boolean> {
    const done = result.reason === 'done';
    const content = done ? result.content : `Error: the sub-agent ended with reason ${result.reason}`;
    try {
      await report(parentOperationId, parentToolCallId, { content, success: done });
      return true;
    } catch (error) {
      if (error instanceof AlreadyCompletedError || error instanceof OperationCompletedError) return true;
      this.logger.error(`sub-agent ${result.operationId} could not report to ${parentOperationId} (${errorType(error)})`);
      return false;
    }
  }
}

/** Every point a terminal sequence dispatches, whatever its reason. */
const TERMINAL_POINTS = ['onComplete', 'on_run_end', 'onError', 'on_run_error'] as const;

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
