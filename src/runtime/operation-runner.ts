/**
 * The work behind the public `AgentRuntime` facade (agent-runtime.ts). `OperationRunner` also serves the
 * package's own callers (sub-agents, queue workers, the reconciler). It owns the per-operation lifecycle:
 * `on_run_start` once, steps until a terminal reason, and the terminal sequence of DESIGN §3, exactly once:
 * `done` → `onComplete` → `on_run_end`; otherwise `onError` (reason `error` only) → `onComplete` →
 * `on_run_error`. Caller hooks are registered in memory for the life of the operation and unregistered
 * at its end (A4); their webhook parts are persisted with the operation (W3, L2).
 *
 * Steps run while this process holds the operation's lease (SPEC G2); an operation that waits (approval,
 * deferred result) holds no step and no timer: its `done` follows the operation's events, so it may be
 * resumed here or by another process on the same database, and `done` settles wherever it ends. A decision
 * and "runnable again" commit together (G3); of two processes resolving the last pending items at once,
 * exactly one resumes it. Whatever a dead process left — an expired lease, an owed notification, an owed
 * terminal sequence — the `OperationReconciler` of a surviving one takes over.
 */
import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap } from '@nestjs/common';
import type { AgentHook } from '../hooks/agent-hook.js';
import type { TerminalReason, UsageTotals } from '../hooks/agent-events.js';
import { AuthContext, RunContext, RunEndContext } from '../hooks/contexts.js';
import { errorType } from '../hooks/hook-errors.js';
import { HookDispatcher } from '../hooks/hook-dispatcher.js';
import { HookRegistry } from '../hooks/hook-registry.js';
import { AGENT_DIRECTORY, type AgentDirectory } from './agent-directory.port.js';
import {
  RUNTIME_STORE,
  type DurableDecision,
  type DurableDeferredPublish,
  type InterventionAction,
  type OwedNotification,
  type OwedNotificationPoint,
  type RuntimeStore,
  type StoredCallerHook,
  type StoredIntervention,
  type StoredOperation,
  type StoredRunContext,
  type ToolMessage,
} from './runtime-store.port.js';
import {
  AlreadyCompletedError,
  IdempotencyKeyReusedError,
  InterventionNotPendingError,
  OperationCompletedError,
  RunCancelledError,
  RunFailedError,
  RunLimitError,
  RuntimeNotReadyError,
  RuntimeShuttingDownError,
  SubAgentDepthError,
  UnknownAgentError,
  UnknownInterventionError,
  UnknownOperationError,
} from './runtime-errors.js';
import { rejectionReceipt } from './intervention-receipts.js';
import { DeferredClaim } from './deferred-claim.js';
import { ToolCallRunner } from './tool-call.runner.js';
import type { SubAgents, SubAgentStart } from './sub-agent.port.js';
import { STEP_SCHEDULER, type QueuedStepContext, type StepScheduler } from './step-scheduler.port.js';
import { LeaseHolder, type HeldLease } from './lease-holder.js';
import { CompletionWaits } from './completion-waits.js';
import { RECOVERY_SETTINGS, type RecoverySettings } from './recovery-settings.js';
import { StepExecutor } from './step-executor.js';
import { agentEventBase } from './agent-event-base.js';
import { errorSummary } from './error-summary.js';
import { clientToolDefinition, type ClientToolDeclaration } from './tools/client-tools.js';
import { TOOL_CATALOG, type ToolCatalog, type ToolDefinition } from './tools/tool-types.js';

export interface ExecAgentInput {
  agentId: string;
  prompt: string;
  hooks?: AgentHook[];
  context?: RunContext;
  ownerId?: string;
  idempotencyKey?: string;
  /**
   * With `idempotencyKey`: a digest of the request (the HTTP API sends SHA-256 of its canonical body). A retry
   * whose digest differs from the stored one is refused (G8); without a digest a retry is not compared.
   */
  idempotencyDigest?: string;
  /** Tools the caller's own executor runs (SPEC G1): offered when the agent's `tools:` selects them, always deferred. */
  clientTools?: ClientToolDeclaration[];
}

/** A child operation (`agents/call`): what `start` needs beyond a caller's input. */
interface ChildLink {
  parentOperationId: string;
  parentToolCallId: string;
  threadId: string;
  /** The parent's persisted caller hooks: a sub-agent is no way around the caller's policy. */
  callerHooks: StoredCallerHook[];
}

export interface OperationResult {
  operationId: string;
  status: 'completed';
  reason: TerminalReason;
  content: string;
  usage: UsageTotals;
}

interface LiveOperation {
  controller: AbortController;
  runContext: RunContext;
  startedAt: number;
  steps: number;
  error?: unknown;
  /** A step loop is running here. */
  driving: boolean;
  /** A resume arrived while the loop was still returning from its pause: go on instead of stopping. */
  resumeRequested: boolean;
  settled: boolean;
  /** This process runs the terminal sequence: a completion event is its own, not a cancel. */
  finishing: boolean;
  /** A completion watcher is subscribed (one per live operation). */
  watched: boolean;
  done: Promise<OperationResult>;
  settle(result: OperationResult): void;
  /** The app closed before the operation completed: `done` rejects (the operation goes on elsewhere or after a restart). */
  abandon(error: Error): void;
}

/** Owed items (notifications, terminal sequences) one reconcile pass takes; the next pass takes the rest. */
const OWED_PER_PASS = 50;
/** Operations in one chain of `agents/call`, the top-level one included. */
export const MAX_SUB_AGENT_DEPTH = 5;

/** Internal: not exported from the package; hosts use `AgentRuntime`. */
@Injectable()
export class OperationRunner implements OnApplicationBootstrap, SubAgents {
  private readonly logger = new Logger('AgentRuntime');
  private readonly live = new Map<string, LiveOperation>();
  /** Set at shutdown: watchers stop polling (and never reopen the database). */
  private stopped = false;
  /**
   * SPEC G4, driven by the `ShutdownCoordinator`: `stopping` aborts when the app starts closing (no new
   * step or call begins; the one in flight goes on), `cut` at the end of the grace period (the call in
   * flight is abandoned without a result and the step handed back).
   */
  private readonly stopping = new AbortController();
  private readonly cut = new AbortController();
  /** Work in progress here that must end before the clients close: step loops, queued steps, owed sequences. */
  private readonly inFlight = new Set<Promise<void>>();
  /** This runtime instance, in claims it makes (owed terminal sequences). */
  private readonly instanceId = `${process.pid}:${randomUUID()}`;
  /** Set once the application bootstrapped: every `@Tool` and `@OnHook` was discovered at module init. */
  private bootstrapped = false;

  constructor(
    private readonly dispatcher: HookDispatcher,
    private readonly registry: HookRegistry,
    private readonly executor: StepExecutor,
    private readonly tools: ToolCallRunner,
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
    @Inject(AGENT_DIRECTORY) private readonly agents: AgentDirectory,
    @Inject(TOOL_CATALOG) private readonly catalog: ToolCatalog,
    private readonly leases: LeaseHolder,
    @Inject(RECOVERY_SETTINGS) private readonly recovery: RecoverySettings,
    private readonly waits: CompletionWaits,
    /** Queue mode only: steps run as jobs on any worker instead of in this process. */
    @Optional() @Inject(STEP_SCHEDULER) private readonly scheduler?: StepScheduler,
  ) {}

  onApplicationBootstrap(): void {
    this.bootstrapped = true;
  }

  /** Starts an operation; `done` resolves with `{ status: 'completed', reason }` whatever the reason. */
  async execAgent(input: ExecAgentInput): Promise<{ operationId: string; done: Promise<OperationResult> }> {
    const { operationId, done } = await this.start(input);
    return { operationId, done };
  }

  private async start(input: ExecAgentInput, child?: ChildLink): Promise<{ operationId: string; done: Promise<OperationResult>; live?: LiveOperation }> {
    if (!this.bootstrapped) throw new RuntimeNotReadyError();
    if (this.stopped) throw new RuntimeShuttingDownError();
    if (!this.agents.agent(input.agentId)) throw new UnknownAgentError(input.agentId);
    if (typeof input.prompt !== 'string') throw new TypeError('prompt must be a string');
    // Validated before anything is registered or stored; a sub-agent runs with its own agent's tools only.
    const clientTools = input.clientTools !== undefined ? this.catalog.declareClientTools(input.clientTools) : [];
    const operationId = randomUUID();
    // Validates the whole batch before anything is stored (A1); handlers stay in memory only (W3).
    const registered = this.registry.register(operationId, input.hooks ?? []);
    const callerHooks: StoredCallerHook[] = child ? child.callerHooks.map((hook, position) => ({ ...hook, position })) : [];
    registered.forEach((hook, position) => {
      const matcher = input.hooks?.[position]?.matcher;
      if (hook.webhook) callerHooks.push({ position, hookId: hook.id, type: hook.point, ...(matcher ? { matcher } : {}), webhook: hook.webhook });
    });
    const runContext = new RunContext({
      runId: operationId,
      ...(input.context?.userId !== undefined ? { userId: input.context.userId } : {}),
      ...(input.context?.organizationId !== undefined ? { organizationId: input.context.organizationId } : {}),
      ...(input.context?.authContext ? { authContext: input.context.authContext } : {}),
      metadata: { ...(input.context?.metadata ?? {}) },
    });
    let stored;
    try {
      stored = await this.store.createOperation({
        id: operationId,
        agentId: input.agentId,
        prompt: input.prompt,
        runContext: storedContext(runContext),
        callerHooks,
        ...(child ? { parentOperationId: child.parentOperationId, parentToolCallId: child.parentToolCallId, threadId: child.threadId } : {}),
        ...(input.ownerId !== undefined ? { ownerId: input.ownerId } : {}),
        ...(input.idempotencyKey !== undefined ? { idempotencyKey: input.idempotencyKey } : {}),
        ...(input.idempotencyKey !== undefined && input.idempotencyDigest !== undefined ? { idempotencyDigest: input.idempotencyDigest } : {}),
        ...(clientTools.length > 0 ? { clientTools } : {}),
      });
    } catch (error) {
      this.registry.unregister(operationId);
      throw error;
    }
    if (stored.id !== operationId) {
      // The idempotency key named an existing operation: answer with it, start nothing new.
      this.registry.unregister(operationId);
      // G8: unless it was created from another request (both digests known and different).
      if (input.idempotencyDigest !== undefined && stored.idempotencyDigest !== undefined && stored.idempotencyDigest !== input.idempotencyDigest) {
        throw new IdempotencyKeyReusedError();
      }
      // One watcher per operation and process, however many retries ask for it.
      const existing = this.live.get(stored.id) ?? (stored.status === 'completed' ? undefined : this.ensureLive(stored));
      return { operationId: stored.id, done: existing?.done ?? this.whenCompleted(stored.id), ...(existing ? { live: existing } : {}) };
    }
    const live = newLive(runContext);
    this.live.set(operationId, live);
    if (this.scheduler) void this.startQueued(operationId, live);
    else this.track(this.drive(operationId, live, true));
    return { operationId, done: live.done, live };
  }

  /**
   * Starts a sub-agent for the parent's `agents/call` (SubAgents port): its own operation and `threadId`,
   * the parent's owner, identity and persisted caller hooks. Its answer reaches the parent only through
   * the completion bridge in `finish` (P5).
   */
  async startChild(start: SubAgentStart): Promise<{ operationId: string; threadId: string }> {
    const parent = await this.operation(start.parentOperationId);
    // An agent that delegates to itself must not nest without end.
    let depth = 1;
    for (let ancestor = parent.parentOperationId; ancestor !== undefined; ancestor = (await this.store.getOperation(ancestor))?.parentOperationId) {
      if (++depth >= MAX_SUB_AGENT_DEPTH) throw new SubAgentDepthError(MAX_SUB_AGENT_DEPTH);
    }
    const threadId = randomUUID();
    const { operationId } = await this.start(
      {
        agentId: start.agentId,
        prompt: start.instruction,
        context: start.runContext,
        ...(parent.ownerId !== undefined ? { ownerId: parent.ownerId } : {}),
      },
      { parentOperationId: parent.id, parentToolCallId: start.parentToolCallId, threadId, callerHooks: await this.store.callerHooks(parent.id) },
    );
    return { operationId, threadId };
  }

  /** Runs to the end; resolves on reason `done`, else rejects with the original error or a typed one. */
  async run(message: string, options: { agentId: string; context?: RunContext; hooks?: AgentHook[] }): Promise<OperationResult> {
    const { operationId, done, live } = await this.start({ agentId: options.agentId, prompt: message, ...(options.hooks ? { hooks: options.hooks } : {}), ...(options.context ? { context: options.context } : {}) });
    const result = await done;
    if (result.reason === 'done') return result;
    if (result.reason === 'max_steps' || result.reason === 'cost_limit') throw new RunLimitError(result.reason, operationId);
    if (result.reason === 'interrupted') throw new RunCancelledError(operationId);
    throw live?.error ?? new RunFailedError(operationId, 'Error');
  }

  /**
   * Cancels an operation: the signal reaches the model call, the tool and the webhooks of a running step;
   * a waiting operation ends at once. Either way the terminal sequence runs once, reason `interrupted`.
   */
  async cancel(operationId: string): Promise<void> {
    const operation = await this.operation(operationId);
    if (operation.status === 'completed') return;
    const live = this.ensureLive(operation);
    if (live.driving) {
      live.controller.abort(new RunCancelledError(operationId));
      return;
    }
    await this.finish(operationId, live, 'interrupted');
  }

  /**
   * Approves a pending call (SPEC A3): it runs, through every hook, when the operation resumes. The
   * decision, "runnable again" and the owed `afterHumanIntervention` commit together (G3); the hook is
   * delivered after the commit, then the operation goes on. A crash in between loses nothing: a reconciler
   * delivers the notification and drives the operation.
   */
  async approve(operationId: string, toolCallId: string, options: { decidedBy?: string } = {}): Promise<void> {
    const { operation, item, decided } = await this.decide(operationId, toolCallId, { action: 'approve', ...(options.decidedBy !== undefined ? { decidedBy: options.decidedBy } : {}) }, 'afterHumanIntervention');
    const live = this.ensureLive(operation);
    await this.notifyThenGoOn(operation, item, live, decided, {});
  }

  /**
   * Rejects a pending call. By default the operation stops (`onStopByHumanIntervention`, reason
   * `interrupted`): the decision, the rejection receipt and the terminal transition commit together and the
   * terminal sequence follows. With `continue: true` the reason becomes the call's result and the run goes on.
   */
  async reject(operationId: string, toolCallId: string, options: { reason?: string; continue?: boolean; decidedBy?: string } = {}): Promise<void> {
    const decision = {
      action: options.continue ? ('rejectAndContinue' as const) : ('reject' as const),
      ...(options.reason !== undefined ? { reason: options.reason } : {}),
      ...(options.decidedBy !== undefined ? { decidedBy: options.decidedBy } : {}),
    };
    const reason = options.reason !== undefined ? { rejectionReason: options.reason } : {};
    if (options.continue) {
      const { operation, item, decided } = await this.decide(operationId, toolCallId, decision, 'afterHumanIntervention');
      const live = this.ensureLive(operation);
      await this.notifyThenGoOn(operation, item, live, decided, reason);
      return;
    }
    const holder = this.terminalHolder();
    // This process runs the stop's terminal sequence: its own completion event must not settle `done` (and
    // drop the caller hooks) before `onStopByHumanIntervention` and `onComplete` ran.
    const early = this.live.get(operationId);
    if (early) early.finishing = true;
    let committed;
    try {
      committed = await this.decide(operationId, toolCallId, decision, 'onStopByHumanIntervention', holder);
    } catch (error) {
      if (early) early.finishing = false;
      throw error;
    }
    const { operation, item, decided } = committed;
    const live = this.ensureLive(operation);
    live.finishing = true;
    // Held from the commit on, so a slow notification does not let a reconciler run the sequence too.
    const holding = decided.completed ? this.leases.holdTerminal(operationId, holder) : undefined;
    // A step of this process still running (the decision landed before it paused) stops at its next commit.
    try {
      await this.deliverOwned(operation, item, live, decided.owed, reason);
    } finally {
      await this.afterTransition(operationId, live, 'interrupted', undefined, decided.completed ? holder : undefined, holding);
    }
  }

  /**
   * The result of a deferred call arrives (L4, P3, P4): the after-hooks of the original caller hooks
   * (restored from the database) and of the current environment run, then the result is written with a
   * compare-and-set on the empty placeholder. The first final write wins; a later one throws
   * `AlreadyCompletedError` and changes nothing. One result at a time runs the after-chain: a duplicate
   * arriving meanwhile is `AlreadyCompletedError` too (G5). Once the operation is completed, nothing is
   * published and `OperationCompletedError` is thrown — decided in the publishing transaction, so a
   * cancel that lands while the after-chain decides wins. The result is stored with the claim, before the
   * after-chain (SPEC G3): if this process dies during the chain, a reconciler finishes it
   * (`finishReceivedDeferred`) and a second post stays `AlreadyCompletedError`.
   */
  async completeDeferred(operationId: string, toolCallId: string, result: { content: string; success?: boolean }): Promise<{ published: true }> {
    if (typeof result?.content !== 'string') throw new TypeError('result.content must be a string');
    if (result.success !== undefined && typeof result.success !== 'boolean') throw new TypeError('result.success must be a boolean');
    if (this.stopped) throw new RuntimeShuttingDownError();
    const operation = await this.operation(operationId);
    const item = (await this.store.interventions(operationId)).find((i) => i.toolCallId === toolCallId && i.kind === 'deferred');
    if (!item) throw new UnknownInterventionError(operationId, toolCallId, 'deferred call');
    if ((await this.store.placeholderState(operationId, toolCallId)) !== 'empty') throw new AlreadyCompletedError(operationId, toolCallId);
    if (operation.status === 'completed') throw new OperationCompletedError(operationId, toolCallId);
    // Held (and renewed) for one lease: a dead decider's result is finished within the G2 bound.
    const claim = await DeferredClaim.take(this.store, operationId, toolCallId, `${this.instanceId}:${randomUUID()}`, {
      received: { content: result.content, success: result.success ?? true },
      holdMs: this.recovery.leaseMs,
    });
    if (!claim) throw new AlreadyCompletedError(operationId, toolCallId);
    const live = this.ensureLive(operation);
    let published: DurableDeferredPublish | undefined;
    try {
      published = await this.decideDeferred(operation, live, item, result, claim.claimant);
    } finally {
      await claim.end(published?.outcome === 'published');
    }
    if (published?.outcome === 'operation_completed') throw new OperationCompletedError(operationId, toolCallId);
    if (published?.outcome === 'already_completed') throw new AlreadyCompletedError(operationId, toolCallId);
    // The publish made the operation runnable again in its own transaction (G3) when this was the last item.
    if (published?.resumed) await this.goOn(operationId, live);
    return { published: true };
  }

  /** Runs the after-chain of a claimed deferred result, then publishes what it decided (P4: hooks, then the write). */
  private async decideDeferred(
    operation: StoredOperation,
    live: LiveOperation,
    item: StoredIntervention,
    result: { content: string; success?: boolean },
    claimant: string,
  ): Promise<DurableDeferredPublish> {
    const operationId = operation.id;
    const toolCallId = item.toolCallId;
    // Caller policy comes from the database; a read error propagates, never read as "no hooks" (L4).
    await this.executor.restoreCallerHooks(operationId);
    const assistant = (await this.store.messages(operationId)).find((m) => m.role === 'assistant' && m.toolCalls?.some((c) => c.id === toolCallId));
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
  }

  /**
   * SPEC G3: finishes deferred results received by a process that died during their after-chain (the
   * reconciler calls this after the owed notifications). Each stored result whose claim lapsed is claimed
   * here (one at a time, renewed while its chain runs, so no two deciders run one chain at once), its caller
   * hooks are restored, the after-chain runs with the stored result and the outcome is published like a
   * posted one — the operation made runnable again in the same transaction, then driven (local) or
   * scheduled (queue). A failure leaves the result stored, tried again once its claim lapsed. Returns how
   * many were published.
   */
  async finishReceivedDeferred(): Promise<number> {
    // At most this many per pass; the next pass takes the rest.
    const perPass = 50;
    let published = 0;
    for (let taken = 0; taken < perPass && !this.stopped; taken++) {
      const claimant = `${this.instanceId}:deferred:${randomUUID()}`;
      const [received] = await this.store.claimReceivedDeferred(claimant, this.recovery.leaseMs, 1);
      if (!received) break;
      const { operationId, toolCallId } = received;
      const claim = DeferredClaim.held(this.store, operationId, toolCallId, claimant, this.recovery.leaseMs);
      const restoredHere = !this.registry.hasCallerHooks(operationId);
      let outcome: DurableDeferredPublish | undefined;
      let failed = false;
      try {
        const operation = await this.store.getOperation(operationId);
        const item = (await this.store.interventions(operationId)).find((i) => i.toolCallId === toolCallId && i.kind === 'deferred');
        if (operation && item) {
          const live = this.live.get(operationId) ?? newLive(restoredContext(operationId, operation.runContext));
          outcome = await this.decideDeferred(operation, live, item, received.result, claimant);
          if (outcome.outcome === 'published') published++;
          if (outcome.resumed) {
            // Resumed by this commit: driven (or scheduled) here, as after a posted result.
            if (!this.live.has(operationId)) {
              this.live.set(operationId, live);
              this.watch(operationId, live);
            }
            await this.goOn(operationId, live);
          }
        }
      } catch (error) {
        failed = true;
        this.logger.warn(`received deferred result of ${operationId} could not be finished (${errorType(error)}); a pass retries it once the claim lapsed`);
      } finally {
        // Published: nothing to release. Refused (already final, operation completed) or nothing to decide
        // it for: the result goes. Failed: kept, and tried again once this claim lapsed (one lease).
        await claim.end(outcome?.outcome === 'published', { retryLater: failed });
        if (restoredHere && !this.live.has(operationId)) this.registry.unregister(operationId);
      }
    }
    return published;
  }

  /** Resolves with the operation's result once it is completed, here or in another process. */
  async result(operationId: string): Promise<OperationResult> {
    const live = this.live.get(operationId);
    if (live) return live.done;
    await this.operation(operationId);
    return this.whenCompleted(operationId);
  }

  /** An operation this process is not driving: resolves once it completed, here or elsewhere (its events, G2). */
  private async whenCompleted(operationId: string): Promise<OperationResult> {
    await this.waits.whenCompleted(operationId);
    const operation = await this.operation(operationId);
    return this.resultOf(operationId, operation.reason ?? 'done');
  }

  /**
   * G4 step 1 (the `ShutdownCoordinator` calls it first): no new operation, decision or step is taken here
   * from now on; the steps in flight see `stopping` and end at their next boundary (local mode: reason
   * `interrupted`, as before; queue mode: handed back to the queue).
   */
  stopTakingSteps(): void {
    this.stopped = true;
    this.stopping.abort(new RuntimeShuttingDownError());
  }

  /**
   * G4 step 2: waits for the steps in flight; a tool call still running after `graceMs` is cut — it
   * publishes nothing and its step is handed back. Resolves once nothing of a step runs any more, while
   * every client (MCP, webhooks, Redis, the database) is still open.
   */
  async drain(graceMs: number): Promise<void> {
    this.stopTakingSteps();
    const deadline = setTimeout(() => this.cut.abort(new RuntimeShuttingDownError()), graceMs);
    deadline.unref();
    try {
      while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
    } finally {
      clearTimeout(deadline);
    }
    // Waiting and handed-back operations stay in the database for whoever resumes or reconciles them; a
    // `done` of this app can no longer settle, so it rejects instead of hanging.
    for (const live of this.live.values()) live.abandon(new RuntimeShuttingDownError());
    this.live.clear();
    this.waits.stop();
  }

  /** Work the drain waits for; its failure is handled by the work itself. */
  private track(work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.inFlight.add(settled);
    void settled.then(() => this.inFlight.delete(settled));
  }

  /**
   * Local mode: drives the operation's steps in this process while it holds the operation's lease (G2), so
   * that two processes on one database never run one operation's step at once, and a process that dies
   * leaves a lease that expires and is taken over. Ends at a pause (the pause frees the lease), a terminal
   * reason, a lease another process took (it drives from there), or shutdown (G4: the step is handed back).
   */
  private async drive(operationId: string, live: LiveOperation, fresh: boolean, held?: HeldLease): Promise<void> {
    live.driving = true;
    // A cancel or a takeover by another process reaches this step through the operation's events.
    this.watch(operationId, live);
    let lease = held ?? await this.leases.hold(operationId).catch((error: unknown) => {
      this.logger.warn(`could not take the lease of ${operationId} (${errorType(error)}); the reconciler will`);
      return null;
    });
    if (!lease) {
      // Another process drives it now (or it ended): this one waits for the outcome.
      live.driving = false;
      this.watch(operationId, live);
      return;
    }
    let reason: TerminalReason = 'error';
    let signal = this.stepSignal(live, lease);
    // Not a cancellation: the app closes (the step is handed back) or another process took the lease over.
    const givenUp = (held: HeldLease) => !live.controller.signal.aborted && (this.stopping.signal.aborted || held.lost.aborted);
    try {
      if (fresh) await this.runStart(operationId, live, lease.owner);
      for (;;) {
        const result = await this.executor.step({ operationId, runContext: live.runContext, signal, stopping: this.stopping.signal, leaseOwner: lease.owner, subAgents: this });
        live.steps++;
        if (result && 'waiting' in result) {
          // The pause freed the lease in its own transaction, so a decision elsewhere may drive at once; a step
          // that found the operation already waiting frees it here (owner-conditional, harmless after a pause).
          await lease.release();
          if (live.resumeRequested) {
            live.resumeRequested = false;
            lease = await this.leases.hold(operationId);
            if (lease) {
              signal = this.stepSignal(live, lease);
              continue;
            }
          }
          live.driving = false;
          this.watch(operationId, live);
          return;
        }
        if (result) {
          if (result.terminal === 'interrupted' && givenUp(lease)) return await this.giveUp(operationId, live, lease);
          reason = result.terminal;
          break;
        }
      }
    } catch (error) {
      if (lease && givenUp(lease)) return await this.giveUp(operationId, live, lease);
      reason = signal.aborted || error instanceof RuntimeShuttingDownError ? 'interrupted' : 'error';
      if (reason === 'error') live.error = error;
    }
    lease?.stop();
    await this.finish(operationId, live, reason, lease?.owner);
  }

  /** Cancelled, cut at the end of the shutdown grace period (G4), or the lease lost. */
  private stepSignal(live: LiveOperation, lease: HeldLease): AbortSignal {
    return AbortSignal.any([live.controller.signal, this.cut.signal, lease.lost]);
  }

  /**
   * The step stops without a terminal reason. Shutdown: the lease is handed back, so whichever process
   * reconciles next (this one restarted, or another) runs the step again — a plain call that was cut may
   * run twice (documented), an approved one never does. Lease lost: the new holder drives on.
   */
  private async giveUp(operationId: string, live: LiveOperation, lease: HeldLease): Promise<void> {
    live.driving = false;
    if (lease.lost.aborted) {
      lease.stop();
      this.watch(operationId, live);
      return;
    }
    await lease.handBack();
  }

  /**
   * The reconciler found a running operation nobody holds (its process died, or it handed the step back):
   * drive it here (local mode). A no-op while this process drives it already or is closing.
   */
  adopt(operationId: string): void {
    if (this.stopped) return;
    const existing = this.live.get(operationId);
    if (existing?.driving) return;
    this.track(
      this.store.getOperation(operationId).then((operation) => {
        if (!operation || operation.status !== 'running' || this.stopped) return;
        const live = this.live.get(operationId) ?? newLive(restoredContext(operationId, operation.runContext));
        if (live.driving) return;
        this.live.set(operationId, live);
        return this.drive(operationId, live, false);
      }),
    );
  }

  /** `on_run_start` once per operation; a replaced context is stored, so a resume elsewhere sees it too. */
  private async runStart(operationId: string, live: LiveOperation, leaseOwner?: string): Promise<void> {
    const started = await this.dispatcher.transform('on_run_start', live.runContext, { operationId });
    if (started === live.runContext) return;
    live.runContext = started;
    const operation = await this.operation(operationId);
    await this.store.commit(operationId, operation.version, undefined, { runContext: storedContext(started) }, leaseOwner);
  }

  /**
   * One watcher per live operation, on its events (no timer of its own): when another process completes it
   * — a cancel, a decision, a takeover — `done` settles here, and a step this process is still running on
   * it is aborted (its commits would be refused anyway).
   */
  private watch(operationId: string, live: LiveOperation): void {
    if (live.watched) return;
    live.watched = true;
    void this.waits.whenCompleted(operationId).then(
      async () => {
        live.watched = false;
        if (live.settled || live.finishing) return;
        if (live.driving) {
          live.controller.abort(new RunCancelledError(operationId));
          return;
        }
        const operation = await this.operation(operationId).catch(() => null);
        const reason = operation?.reason ?? 'done';
        this.release(operationId, live, await this.resultOf(operationId, reason).catch(() => emptyResult(operationId, reason)));
      },
      () => (live.watched = false),
    ).catch(() => undefined);
  }

  /**
   * The operation was made runnable again by a commit of this process (a decision, a deferred result): it
   * goes on here (local mode) or on the queue. While the app closes it stays running in the database, and
   * the reconciler of whichever process runs next takes it over (G2, G4).
   */
  private async goOn(operationId: string, live: LiveOperation): Promise<void> {
    if (this.stopped) return;
    if (this.scheduler) await this.scheduleNext(operationId);
    else if (live.driving) live.resumeRequested = true;
    else this.track(this.drive(operationId, live, false));
  }

  /**
   * Queue mode: `on_run_start` here, where the caller's identity (and token) is, then the first step is a
   * job. `done` settles when the database shows the operation completed, whichever worker ends it.
   */
  private async startQueued(operationId: string, live: LiveOperation): Promise<void> {
    try {
      await this.runStart(operationId, live);
    } catch (error) {
      live.error = error;
      await this.finish(operationId, live, 'error');
      return;
    }
    await this.scheduleNext(operationId);
    this.watch(operationId, live);
  }

  /** Hands the operation's next step to the scheduler; if that fails (Redis down), the reconciler retries it. */
  private async scheduleNext(operationId: string): Promise<void> {
    try {
      const operation = await this.operation(operationId);
      if (operation.status === 'running') await this.scheduler!.schedule(operationId, operation.version);
    } catch (error) {
      this.logger.warn(`could not schedule the next step of ${operationId} (${errorType(error)}); the reconciler will`);
    }
  }

  /**
   * Queue mode, on a worker: runs one step of a running operation and reacts — `next` asks the worker to
   * schedule the next step, a pause leaves it waiting, a terminal reason runs the terminal sequence here. Caller webhooks come from
   * the database and environment hooks from this worker's current environment (W3, L1); handlers given to
   * `execAgent` in another process are not here. A step that lost its lease, or whose operation ended
   * elsewhere (cancelled), stops without a second terminal sequence.
   */
  runQueuedStep(operationId: string, worker: QueuedStepContext): Promise<QueuedStepOutcome> {
    const step = this.queuedStep(operationId, worker);
    this.track(step);
    return step;
  }

  private async queuedStep(operationId: string, worker: QueuedStepContext): Promise<QueuedStepOutcome> {
    const operation = await this.store.getOperation(operationId);
    if (!operation || operation.status !== 'running') return 'ran';
    // G4: a job taken while the app closes goes back to the queue untouched.
    if (this.stopped) return 'handedBack';
    const own = this.live.get(operationId);
    const live = own ?? newLive(restoredContext(operationId, operation.runContext));
    const restoredHere = !this.registry.hasCallerHooks(operationId);
    const signal = AbortSignal.any([live.controller.signal, worker.signal, this.cut.signal]);
    // The worker or the app stopping is not a cancellation: the step goes back to the queue for another worker.
    const handingBack = async () =>
      (worker.signal.aborted || this.stopped) && !live.controller.signal.aborted && (await this.store.getOperation(operationId))?.status === 'running';
    live.driving = true;
    try {
      const result = await this.executor.step({ operationId, runContext: live.runContext, signal, leaseOwner: worker.leaseOwner, stopping: this.stopping.signal, subAgents: this });
      // The worker schedules the next step once it has let go of the operation's lease.
      if (result === undefined) return 'next';
      if ('terminal' in result) {
        if (result.terminal === 'interrupted' && (await handingBack())) return 'handedBack';
        await this.finish(operationId, live, result.terminal);
      }
      return 'ran';
    } catch (error) {
      if (await handingBack()) return 'handedBack';
      const now = await this.store.getOperation(operationId);
      // Ended elsewhere (cancel) or taken over by another worker after our lease lapsed: not ours to end.
      if (!now || now.status !== 'running' || (now.leaseOwner !== undefined && now.leaseOwner !== worker.leaseOwner)) return 'ran';
      if (!signal.aborted) live.error = error;
      await this.finish(operationId, live, signal.aborted ? 'interrupted' : 'error');
      return 'ran';
    } finally {
      live.driving = false;
      // A worker keeps nothing of an operation whose next step may run anywhere (A4).
      if (!own && restoredHere) this.registry.unregister(operationId);
      // The step's timeline is written before the job ends: a worker killed later loses none of it.
      await this.store.flushTimeline().catch(() => undefined);
    }
  }

  /** The live state of an operation this process did not start (after a restart): context from the database, no token. */
  private ensureLive(operation: StoredOperation): LiveOperation {
    let live = this.live.get(operation.id);
    if (!live) {
      live = newLive(restoredContext(operation.id, operation.runContext));
      this.live.set(operation.id, live);
      this.watch(operation.id, live);
    }
    return live;
  }

  /**
   * Checks that the call waits for a human decision and commits the decision once, with what it makes
   * happen (G3): the owed notification (claimed by this process), "runnable again" or, for a stop, the
   * receipt and the terminal transition (held by `terminalHolder`).
   */
  private async decide(
    operationId: string,
    toolCallId: string,
    decision: { action: InterventionAction; reason?: string; decidedBy?: string },
    notify: OwedNotificationPoint,
    terminalHolder?: string,
  ): Promise<{ operation: StoredOperation; item: StoredIntervention; decided: DurableDecision }> {
    if (this.stopped) throw new RuntimeShuttingDownError();
    const operation = await this.operation(operationId);
    const item = (await this.store.interventions(operationId)).find((i) => i.toolCallId === toolCallId && i.kind === 'approval');
    if (!item) throw new UnknownInterventionError(operationId, toolCallId, 'approval');
    // A decided item stays `not_pending` after the end; an open one of a completed operation is G5's.
    if (item.status !== 'pending') throw new InterventionNotPendingError(operationId, toolCallId);
    if (operation.status === 'completed') throw new OperationCompletedError(operationId, toolCallId);
    const call = { id: item.toolCallId, identifier: item.identifier, apiName: item.apiName, args: item.args };
    const decided = await this.store.decideDurably(operationId, toolCallId, decision, {
      notify: [notify],
      claimant: this.owedClaimant(),
      holdMs: this.recovery.leaseMs,
      // The stop receipt holds no tool output: published directly (P2), with the terminal transition.
      ...(decision.action === 'reject' ? { receipt: rejectionReceipt(call, decision.reason) as ToolMessage } : {}),
      ...(terminalHolder !== undefined ? { terminalHold: { owner: terminalHolder, ms: this.recovery.leaseMs } } : {}),
    });
    if (decided.outcome === 'operation_completed') throw new OperationCompletedError(operationId, toolCallId);
    if (decided.outcome === 'not_pending') throw new InterventionNotPendingError(operationId, toolCallId);
    // The operation's caller hooks, restored if this process never had them (L2).
    await this.executor.restoreCallerHooks(operationId);
    return { operation, item, decided };
  }

  /**
   * After a decision that made the operation runnable: its lease is taken first (local mode), so no
   * reconciler drives the approved call while a slow `afterHumanIntervention` is still being delivered;
   * then the notification; then the step, under that lease. The decision is committed: a failing hook (a
   * `fallback: 'none'` delivery) must not leave the run stuck — it goes on, and the error reaches the caller.
   */
  private async notifyThenGoOn(operation: StoredOperation, item: StoredIntervention, live: LiveOperation, decided: DurableDecision, extra: { rejectionReason?: string }): Promise<void> {
    const lease = decided.resumed && !this.scheduler && !this.stopped && !live.driving ? await this.leases.hold(operation.id).catch(() => null) : null;
    try {
      await this.deliverOwned(operation, item, live, decided.owed, extra);
    } finally {
      if (lease) {
        if (this.stopped) await lease.handBack();
        else this.track(this.drive(operation.id, live, false, lease));
      } else if (decided.resumed) await this.goOn(operation.id, live);
    }
  }

  /** Who claims owed notifications from this process. */
  private owedClaimant(): string {
    return `${this.instanceId}:owed:${randomUUID()}`;
  }

  /** Who holds a terminal sequence this process is about to run. */
  private terminalHolder(): string {
    return `${this.instanceId}:terminal:${randomUUID()}`;
  }

  /**
   * Delivers the notifications a decision of this process owes, right after its commit. Delivered means the
   * hook ran under its own failure policy: a hook that failed is not retried (its error reaches the
   * decider, as before); only a crash leaves the row owed, for a reconciler.
   */
  private async deliverOwned(operation: StoredOperation, item: StoredIntervention, live: LiveOperation, owed: readonly OwedNotification[], extra: { rejectionReason?: string }): Promise<void> {
    for (const notification of owed) {
      try {
        // The step of the call, not the operation's current one: the webhook-id stays the same on redelivery.
        await this.dispatchOn({ ...operation, stepIndex: item.stepIndex }, live, owedEvent(notification, extra.rejectionReason));
      } finally {
        await this.store.markNotificationDelivered(notification.id).catch((error: unknown) => this.logger.warn(`could not record a delivered notification of ${operation.id} (${errorType(error)})`));
      }
    }
  }

  /**
   * Delivers notifications owed by processes that died between a decision's commit and its delivery (the
   * reconciler calls this first, so a stop's `onStopByHumanIntervention` comes before its terminal sequence).
   * At least once, with the webhook-id of the first attempt. Returns how many were delivered.
   */
  async deliverOwedNotifications(): Promise<number> {
    let delivered = 0;
    // One claim at a time (see `runOwedTerminalSequences`).
    for (let taken = 0; taken < OWED_PER_PASS && !this.stopped; taken++) {
      const owner = this.owedClaimant();
      const [notification] = await this.store.claimOwedNotifications(owner, this.recovery.leaseMs, 1);
      if (!notification) break;
      const operation = await this.store.getOperation(notification.operationId);
      if (!operation) continue;
      const item = (await this.store.interventions(operation.id)).find((i) => i.toolCallId === notification.toolCallId);
      const restoredHere = !this.registry.hasCallerHooks(operation.id);
      try {
        await this.executor.restoreCallerHooks(operation.id);
        const at = item ? { ...operation, stepIndex: item.stepIndex } : operation;
        await this.dispatchOn(at, newLive(restoredContext(operation.id, operation.runContext)), owedEvent(notification, item?.decisionReason));
        await this.store.markNotificationDelivered(notification.id);
        delivered++;
      } catch (error) {
        // The hook ran and failed under its own policy, or the database failed: the next pass tries again.
        this.logger.warn(`owed ${notification.point} of ${operation.id} failed (${errorType(error)})`);
        await this.store.releaseNotification(notification.id, owner).catch(() => undefined);
      } finally {
        if (restoredHere && !this.live.has(operation.id)) this.registry.unregister(operation.id);
      }
    }
    return delivered;
  }

  private async dispatchOn(operation: StoredOperation, live: LiveOperation, event: InterventionEvent): Promise<void> {
    const base = agentEventBase({
      ...operation,
      operationId: operation.id,
      ...(live.runContext.userId ? { userId: live.runContext.userId } : {}),
    });
    await this.dispatcher.dispatch(event.type, { ...base, ...event } as never, { operationId: operation.id, runContext: live.runContext });
  }

  private async operation(operationId: string): Promise<StoredOperation> {
    const operation = await this.store.getOperation(operationId);
    if (!operation) throw new UnknownOperationError(operationId);
    return operation;
  }

  /**
   * The terminal transition and sequence. `leaseOwner`: a step's own end, made only while this process still
   * holds the lease — if another process took the operation over meanwhile (this one's renewals failed), the
   * operation is theirs to end: this process lets go and watches (G2).
   */
  private async finish(operationId: string, live: LiveOperation, reason: TerminalReason, leaseOwner?: string): Promise<void> {
    live.finishing = true;
    const error = live.error;
    const holder = this.terminalHolder();
    let first = false;
    try {
      // S3: the error's type and a summary of our own fields are recorded; its message may hold user input.
      const failure = error !== undefined ? { type: errorType(error), summary: errorSummary(error) } : undefined;
      // This process holds the terminal sequence while it runs; if it dies, a reconciler takes it over (G2).
      first = await this.store.complete(operationId, reason, failure, { owner: holder, ms: this.recovery.leaseMs, ...(leaseOwner !== undefined ? { leaseOwner } : {}) });
      if (first && failure) this.logger.error(`operation ${operationId} failed: ${failure.type}: ${failure.summary}`);
    } catch (failure) {
      // Nothing was completed: `done` must not settle on a state the database does not have. The lease lapses
      // and a reconciler (here or elsewhere) drives the operation again.
      this.logger.error(`terminal transition of ${operationId} failed (${errorType(failure)})`);
      this.letGo(operationId, live);
      return;
    }
    if (!first && leaseOwner !== undefined && (await this.store.getOperation(operationId).catch(() => null))?.status !== 'completed') {
      this.letGo(operationId, live);
      return;
    }
    await this.afterTransition(operationId, live, reason, error, first ? holder : undefined);
  }

  /** The operation goes on without this process (its lease moved, or its end could not be written): watch it. */
  private letGo(operationId: string, live: LiveOperation): void {
    live.finishing = false;
    live.driving = false;
    live.error = undefined;
    this.watch(operationId, live);
  }

  /**
   * After the terminal transition: the terminal sequence (only by `holder`, the one that made the
   * transition, renewing its hold meanwhile — from `holding` if the caller started that already), then
   * `done` settles and what follows it runs.
   */
  private async afterTransition(
    operationId: string,
    live: LiveOperation,
    reason: TerminalReason,
    error: unknown,
    holder: string | undefined,
    holding?: () => void,
  ): Promise<void> {
    live.finishing = true;
    const stopHolding = holding ?? (holder !== undefined ? this.leases.holdTerminal(operationId, holder) : () => undefined);
    try {
      if (holder !== undefined) await this.terminalHooks(operationId, live, reason, error);
    } catch (failure) {
      this.logger.error(`terminal sequence of ${operationId} failed (${errorType(failure)})`);
    }
    try {
      const stored = await this.store.getOperation(operationId).catch(() => null);
      const result = await this.resultOf(operationId, stored?.reason ?? reason).catch(() => emptyResult(operationId, reason));
      this.release(operationId, live, result);
      if (holder !== undefined && stored) await this.afterTerminal(stored, result);
    } finally {
      stopHolding();
    }
  }

  /**
   * What follows the terminal hooks, and then the record that nothing is owed: the sub-agent bridge, the
   * timeline written out. If the process dies before the record, a reconciler runs the sequence again
   * (`runOwedTerminalSequences`): at least once, never lost.
   */
  private async afterTerminal(operation: StoredOperation, result: OperationResult): Promise<void> {
    const bridged = operation.parentOperationId && operation.parentToolCallId ? await this.bridge(operation.parentOperationId, operation.parentToolCallId, result) : true;
    await this.store.flushTimeline().catch((error: unknown) => this.logger.warn(`timeline flush failed (${errorType(error)})`));
    if (bridged) await this.store.markTerminalHooksDone(operation.id).catch((error: unknown) => this.logger.warn(`could not record the end of ${operation.id} (${errorType(error)})`));
  }

  /**
   * Runs the terminal sequences owed by processes that died between an operation's terminal transition
   * and the end of its terminal hooks (the reconciler calls this, in every mode). Each owed operation is
   * claimed in the database first and the claim renewed while it runs, so two processes never run one at
   * once. Returns how many ran.
   */
  async runOwedTerminalSequences(): Promise<number> {
    let ran = 0;
    // One claim at a time, each renewed while it runs: a batch claimed at once would lapse behind a slow hook.
    for (let taken = 0; taken < OWED_PER_PASS && !this.stopped; taken++) {
      const owner = `${this.instanceId}:${randomUUID()}`;
      const [operation] = await this.store.claimOwedTerminalHooks(owner, this.recovery.leaseMs, 1);
      if (!operation) break;
      ran++;
      const stopHolding = this.leases.holdTerminal(operation.id, owner);
      const reason = operation.reason ?? 'done';
      const live = newLive(restoredContext(operation.id, operation.runContext));
      const error = reason === 'error' ? new RunFailedError(operation.id, operation.errorType ?? 'Error') : undefined;
      const restoredHere = !this.registry.hasCallerHooks(operation.id);
      try {
        await this.executor.restoreCallerHooks(operation.id);
        await this.terminalHooks(operation.id, live, reason, error);
      } catch (failure) {
        this.logger.warn(`owed terminal hooks of ${operation.id} failed (${errorType(failure)})`);
      } finally {
        if (restoredHere) this.registry.unregister(operation.id);
      }
      try {
        await this.afterTerminal(operation, await this.resultOf(operation.id, reason));
      } finally {
        stopHolding();
      }
      // A process still waiting on this operation learns of it from the database (its watcher).
    }
    return ran;
  }

  /**
   * The completion bridge (P5): a child's final answer becomes the parent's `agents/call` result — through
   * the parent's after-hooks and the placeholder compare-and-set, like any deferred result. The child has
   * already reported its own `onComplete`. A parent that already has the result, or has ended, keeps it.
   */
  private async bridge(parentOperationId: string, parentToolCallId: string, result: OperationResult): Promise<boolean> {
    const done = result.reason === 'done';
    const content = done ? result.content : `Error: the sub-agent ended with reason ${result.reason}`;
    try {
      await this.completeDeferred(parentOperationId, parentToolCallId, { content, success: done });
      return true;
    } catch (error) {
      if (error instanceof AlreadyCompletedError || error instanceof OperationCompletedError) return true;
      this.logger.error(`sub-agent ${result.operationId} could not report to ${parentOperationId} (${errorType(error)})`);
      return false;
    }
  }


  /** Settles `done` and drops everything this process held for the operation (A4). */
  private release(operationId: string, live: LiveOperation, result: OperationResult): void {
    this.registry.unregister(operationId);
    if (this.live.get(operationId) === live) this.live.delete(operationId);
    live.settle(result);
  }

  private async resultOf(operationId: string, reason: TerminalReason): Promise<OperationResult> {
    const operation = await this.store.getOperation(operationId);
    const lastAssistant = (await this.store.messages(operationId)).findLast((m) => m.role === 'assistant');
    return {
      operationId,
      status: 'completed',
      reason,
      content: lastAssistant?.content ?? '',
      usage: operation?.usage ?? { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    };
  }

  /** DESIGN §3 terminal sequences; hook failures here never mask the run's own outcome. */
  private async terminalHooks(operationId: string, live: LiveOperation, reason: TerminalReason, error: unknown): Promise<void> {
    const operation = await this.store.getOperation(operationId);
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
      const messages = await this.store.messages(operationId);
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
    await safely(() => this.dispatcher.dispatch('onComplete', { ...base, type: 'onComplete', reason }, options));
    const raised = reason === 'error' ? toError(error) : reason === 'interrupted' ? new RunCancelledError(operationId) : new RunLimitError(reason, operationId);
    // on_run_error never propagates and never masks the original error (E2).
    await safely(() => this.dispatcher.dispatch('on_run_error', raised, options));
  }
}

type InterventionEvent =
  | { type: 'afterHumanIntervention'; action: InterventionAction; toolCallId: string; rejectionReason?: string }
  | { type: 'onStopByHumanIntervention'; toolCallId: string; rejectionReason?: string };

/** The event of an owed notification, rebuilt from its identifiers (so every attempt has the same webhook-id). */
function owedEvent(notification: OwedNotification, rejectionReason: string | undefined): InterventionEvent {
  const reason = rejectionReason !== undefined ? { rejectionReason } : {};
  if (notification.point === 'onStopByHumanIntervention') return { type: 'onStopByHumanIntervention', toolCallId: notification.toolCallId, ...reason };
  return { type: 'afterHumanIntervention', action: notification.action ?? 'approve', toolCallId: notification.toolCallId, ...(notification.action === 'rejectAndContinue' ? reason : {}) };
}

/** What a queued step asks of its worker: schedule the next step, nothing, or give the job back. */
export type QueuedStepOutcome = 'next' | 'ran' | 'handedBack';

/** The operation's declared client tool a call names, as the catalog would define it. */
function clientToolOf(operation: StoredOperation, call: { identifier: string; apiName: string }): { tool?: ToolDefinition } {
  const declared = operation.clientTools?.find((tool) => tool.identifier === call.identifier && tool.apiName === call.apiName);
  return declared ? { tool: clientToolDefinition(declared) } : {};
}

function newLive(runContext: RunContext): LiveOperation {
  let settle!: (result: OperationResult) => void;
  let abandon!: (error: Error) => void;
  const done = new Promise<OperationResult>((resolve, reject) => {
    settle = resolve;
    abandon = reject;
  });
  // Nobody may be awaiting `done` when the app closes: that rejection is not an unhandled one.
  done.catch(() => undefined);
  const live: LiveOperation = {
    controller: new AbortController(),
    runContext,
    startedAt: performance.now(),
    steps: 0,
    driving: false,
    resumeRequested: false,
    settled: false,
    finishing: false,
    watched: false,
    done,
    settle: (result) => {
      if (live.settled) return;
      live.settled = true;
      settle(result);
    },
    abandon: (error) => {
      if (live.settled) return;
      live.settled = true;
      abandon(error);
    },
  };
  return live;
}

function emptyResult(operationId: string, reason: TerminalReason): OperationResult {
  return { operationId, status: 'completed', reason, content: '', usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } };
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** The run context as stored: scopes and identity, never the inbound access token (DESIGN §5). */
function storedContext(context: RunContext): StoredRunContext {
  return {
    ...(context.userId !== undefined ? { userId: context.userId } : {}),
    ...(context.organizationId !== undefined ? { organizationId: context.organizationId } : {}),
    ...(context.authContext ? { scopes: [...context.authContext.scopes] } : {}),
    metadata: { ...context.metadata },
  };
}

/** Rebuilds a run context from storage (after a restart): no token (documented, DESIGN §5). */
export function restoredContext(runId: string, stored: StoredRunContext): RunContext {
  return new RunContext({
    runId,
    ...(stored.userId !== undefined ? { userId: stored.userId } : {}),
    ...(stored.organizationId !== undefined ? { organizationId: stored.organizationId } : {}),
    ...(stored.scopes ? { authContext: new AuthContext({ scopes: stored.scopes }) } : {}),
    metadata: stored.metadata ?? {},
  });
}
