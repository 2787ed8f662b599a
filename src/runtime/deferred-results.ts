/**
 * Deferred results (L4, P3, P4, G3, G5): a result posted for a deferred call (or a sub-agent's answer, via
 * the completion bridge) is claimed on its empty placeholder, stored with the claim, run through the
 * after-chain of the original caller hooks (restored from the database) and of the current environment,
 * and published with a compare-and-set; the publish makes the operation runnable again in its own
 * transaction when this was the last pending item. What then drives the operation is the caller's
 * (`GoOn`, `OperationStart`'s): this service never starts a step itself.
 */
import { Inject, Injectable } from '@nestjs/common';
import { DeferredClaim } from './deferred-claim.js';
import { LeaseHolder } from './lease-holder.js';
import { LiveOperation, restoredLive } from './live-operation.js';
import { LiveOperations } from './live-operations.js';
import { RECOVERY_SETTINGS, type RecoverySettings } from './recovery-settings.js';
import { AlreadyCompletedError, OperationCompletedError, RuntimeShuttingDownError, UnknownInterventionError, UnknownOperationError } from './runtime-errors.js';
import { RUNTIME_STORE, type DurableDeferredPublish, type RuntimeStore, type StoredIntervention, type StoredOperation } from './runtime-store.port.js';
import { StepDrain } from './step-drain.js';
import { StepExecutor } from './step-executor.js';
import { ToolCallRunner } from './tool-call.runner.js';
import { clientToolDefinition } from './tools/client-tools.js';
import type { ToolDefinition } from './tools/tool-types.js';
import { claimantId } from './claimant-ids.js';
import { AgentTracer } from '../tracing/agent-tracer.js';

/** The operation was made runnable again by a publish: it goes on (local: driven here; queue: scheduled). */
export type GoOn = (operationId: string, live: LiveOperation) => Promise<void>;

@Injectable()
export class DeferredResults {
  constructor(
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
    private readonly executor: StepExecutor,
    private readonly tools: ToolCallRunner,
    private readonly leases: LeaseHolder,
    @Inject(RECOVERY_SETTINGS) private readonly recovery: RecoverySettings,
    private readonly live: LiveOperations,
    private readonly shutdown: StepDrain,
    private readonly tracer: AgentTracer,
  ) {}

  /**
   * The result of a deferred call arrives (L4, P3, P4): the after-hooks of the original caller hooks
   * (restored from the database) and of the current environment run, then the result is written with a
   * compare-and-set on the empty placeholder. The first final write wins; a later one throws
   * `AlreadyCompletedError` and changes nothing. One result at a time runs the after-chain: a duplicate
   * arriving meanwhile is `AlreadyCompletedError` too (G5). Once the operation is completed, nothing is
   * published and `OperationCompletedError` is thrown — decided in the publishing transaction, so a
   * cancel that lands while the after-chain decides wins. The result is stored with the claim, before the
   * after-chain (SPEC G3): if this process dies during the chain, a reconciler finishes it
   * (`OwedWork.finishReceivedDeferred`) and a second post stays `AlreadyCompletedError`.
   */
  async complete(operationId: string, toolCallId: string, result: { content: string; success?: boolean }, goOn: GoOn): Promise<{ published: true }> {
    if (typeof result?.content !== 'string') throw new TypeError('result.content must be a string');
    if (result.success !== undefined && typeof result.success !== 'boolean') throw new TypeError('result.success must be a boolean');
    if (this.shutdown.stopped) throw new RuntimeShuttingDownError();
    // Independent reads, at once; what they found is judged in the same order as ever.
    const [operation, items, placeholder] = await Promise.all([
      this.store.getOperation(operationId),
      this.store.interventions(operationId),
      this.store.placeholderState(operationId, toolCallId),
    ]);
    if (!operation) throw new UnknownOperationError(operationId);
    const item = items.find((i) => i.toolCallId === toolCallId && i.kind === 'deferred');
    if (!item) throw new UnknownInterventionError(operationId, toolCallId, 'deferred call');
    if (placeholder !== 'empty') throw new AlreadyCompletedError(operationId, toolCallId);
    if (operation.status === 'completed') throw new OperationCompletedError(operationId, toolCallId);
    // Held (and renewed) for one lease: a dead decider's result is finished within the G2 bound.
    const claim = await DeferredClaim.take(this.store, operationId, toolCallId, claimantId(this.leases.instanceId), {
      received: { content: result.content, success: result.success ?? true },
      holdMs: this.recovery.leaseMs,
    });
    if (!claim) throw new AlreadyCompletedError(operationId, toolCallId);
    const live = this.live.ensure(operation);
    let published: DurableDeferredPublish | undefined;
    try {
      published = await this.decide(operation, live, item, result, claim.claimant);
    } finally {
      await claim.end(published?.outcome === 'published');
    }
    if (published?.outcome === 'operation_completed') throw new OperationCompletedError(operationId, toolCallId);
    if (published?.outcome === 'already_completed') throw new AlreadyCompletedError(operationId, toolCallId);
    // The publish made the operation runnable again in its own transaction (G3) when this was the last item.
    if (published?.resumed) await goOn(operationId, live);
    return { published: true };
  }

  /**
   * Runs the after-chain of a claimed deferred result, then publishes what it decided (P4: hooks, then the
   * write) — in the operation's trace (O3), not the poster's.
   */
  private decide(
    operation: StoredOperation,
    live: LiveOperation,
    item: StoredIntervention,
    result: { content: string; success?: boolean },
    claimant: string,
  ): Promise<DurableDeferredPublish> {
    return this.tracer.segment(operation, async () => {
      const operationId = operation.id;
      const toolCallId = item.toolCallId;
      // Caller policy comes from the database; a read error propagates, never read as "no hooks" (L4).
      const [, messages] = await Promise.all([this.executor.restoreCallerHooks(operationId), this.store.messages(operationId)]);
      const assistant = messages.find((m) => m.role === 'assistant' && m.toolCalls?.some((c) => c.id === toolCallId));
      const call = assistant?.toolCalls?.find((c) => c.id === toolCallId) ?? { id: toolCallId, identifier: item.identifier, apiName: item.apiName, args: item.args };
      const outcome = await this.tools.completeDeferred(
        {
          operationId,
          agentId: operation.agentId,
          ...(live.runContext.userId ? { userId: live.runContext.userId } : {}),
          ...(operation.parentOperationId ? { parentOperationId: operation.parentOperationId } : {}),
          ...(operation.threadId ? { threadId: operation.threadId } : {}),
          stepIndex: item.stepIndex,
          callIndex: item.callIndex,
          assistantMessageId: assistant?.id ?? '',
          call,
          runContext: live.runContext,
          signal: live.controller.signal,
          // The operation's own client tools are not in the catalog: their events still say `client`.
          ...clientToolOf(operation, call),
        },
        { content: result.content, success: result.success ?? true },
        assistant !== undefined,
      );
      const message = { ...outcome.message, role: 'tool' as const, toolCallId };
      // The hooks that decided this result are in the timeline before the result is published.
      await this.store.flushTimeline();
      return this.store.publishDeferredDurably(operationId, toolCallId, { content: message.content, success: outcome.success }, message, claimant);
    });
  }

  /**
   * SPEC G3, for `OwedWork.finishReceivedDeferred`: a received result whose decider died, claimed by
   * `claimant`, runs its after-chain here and is published like a posted one; if that made the operation
   * runnable again, it is driven (or scheduled) here, as after a posted result.
   */
  async finishReceived(
    operation: StoredOperation,
    item: StoredIntervention,
    result: { content: string; success?: boolean },
    claimant: string,
    goOn: GoOn,
  ): Promise<DurableDeferredPublish> {
    const operationId = operation.id;
    const live = this.live.get(operationId) ?? restoredLive(operation);
    const outcome = await this.decide(operation, live, item, result, claimant);
    if (outcome.resumed) {
      if (!this.live.has(operationId)) {
        this.live.add(operationId, live);
        this.live.watch(operationId, live);
      }
      await goOn(operationId, live);
    }
    return outcome;
  }
}

/** The operation's declared client tool a call names, as the catalog would define it. */
function clientToolOf(operation: StoredOperation, call: { identifier: string; apiName: string }): { tool?: ToolDefinition } {
  const declared = operation.clientTools?.find((tool) => tool.identifier === call.identifier && tool.apiName === call.apiName);
  return declared ? { tool: clientToolDefinition(declared) } : {};
}
