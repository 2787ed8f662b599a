/**
 * Which tool call a hook outcome belongs to (SPEC F1: a tool point's timeline row carries its call's
 * idempotency key). The dispatcher records outcomes by operation only; the runtime runs each call's hook
 * chain inside this scope, and the outcome sink it wraps adds the call's id to the records of tool points
 * of that operation. The key itself is derived when the timeline is read, never stored.
 *
 * An AsyncLocalStorage follows the chain through every await, so two calls of one operation whose chains
 * overlap (two deferred results arriving together) never mix; a sub-agent's records (another operation)
 * never take the parent's call.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import type { HookOutcomeRecord } from '../../hooks/hook-outcome.js';
import { HOOK_POINTS } from '../../hooks/hook-points.js';
import type { HookOutcomeSink } from '../../hooks/hook-ports.js';

interface RunningCall {
  readonly operationId: string;
  readonly toolCallId: string;
}

@Injectable()
export class ToolCallScope {
  private readonly calls = new AsyncLocalStorage<RunningCall>();

  /** Runs `work` (one call's hook chain) as the call `toolCallId` of `operationId`. */
  run<T>(operationId: string, toolCallId: string, work: () => T): T {
    return this.calls.run({ operationId, toolCallId }, work);
  }

  /** The call running here for `operationId`, if any. */
  toolCallOf(operationId: string | undefined): string | undefined {
    const running = this.calls.getStore();
    return running !== undefined && running.operationId === operationId ? running.toolCallId : undefined;
  }

  /** `sink`, with the running call's id added to the records of tool points (records of other points pass as they are). */
  sink(sink: HookOutcomeSink): HookOutcomeSink {
    return new ToolCallOutcomeSink(sink, this);
  }
}

class ToolCallOutcomeSink implements HookOutcomeSink {
  constructor(
    private readonly next: HookOutcomeSink,
    private readonly scope: ToolCallScope,
  ) {}

  get active(): boolean {
    return this.next.active !== false;
  }

  record(outcome: HookOutcomeRecord): void {
    const toolCallId = outcome.toolCallId === undefined && HOOK_POINTS[outcome.point].toolEvent ? this.scope.toolCallOf(outcome.operationId) : undefined;
    this.next.record(toolCallId === undefined ? outcome : { ...outcome, toolCallId });
  }
}
