/**
 * The work behind the public `AgentRuntime` facade (agent-runtime.ts). `OperationRunner` also serves the
 * package's own callers (sub-agents, queue workers, the reconciler). It owns the per-operation lifecycle:
 * `on_run_start` once, steps until a terminal reason, and the terminal sequence of DESIGN §3, exactly once:
 * `done` → `onComplete` → `on_run_end`; otherwise `onError` (reason `error` only) → `onComplete` →
 * `on_run_error`. Caller hooks are registered in memory for the life of the operation and unregistered
 * at its end (A4); their webhook parts are persisted with the operation (W3, L2).
 *
 * Steps are the `StepScheduler`'s (step-scheduler.port.ts): in this process under the operation's lease
 * (local mode, SPEC G2) or as queue jobs on any worker; the scheduler calls back here (`StepHost`) for
 * `on_run_start` and the terminal sequence. An operation that waits (approval,
 * deferred result) holds no step and no timer: its `done` follows the operation's events, so it may be
 * resumed here or by another process on the same database, and `done` settles wherever it ends. A decision
 * and "runnable again" commit together (G3); of two processes resolving the last pending items at once,
 * exactly one resumes it. Whatever a dead process left — an expired lease, an owed notification, an owed
 * terminal sequence — the `OperationReconciler` of a surviving one takes over (`adopt` here, the rest in
 * `OwedWork`, owed-work.ts).
 *
 * The other jobs live beside it: the live state of one operation (`LiveOperation`, live-operation.ts) and
 * of all of them here with their watchers (`LiveOperations`), the terminal sequences and the sub-agent
 * bridge (`TerminalSequence`), the notifications of decisions (`InterventionNotifier`), the G4 drain of
 * steps (`StepDrain`), the stored run context (run-context-snapshot.ts).
 */
import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { AgentHook } from '../hooks/agent-hook.js';
import type { TerminalReason } from '../hooks/agent-events.js';
import { RunContext } from '../hooks/contexts.js';
import { errorType } from '../hooks/hook-errors.js';
import { HookDispatcher } from '../hooks/hook-dispatcher.js';
import { HookRegistry } from '../hooks/hook-registry.js';
import { AGENT_DIRECTORY, type AgentDirectory } from './agent-directory.port.js';
import {
  RUNTIME_STORE,
  type DurableDecision,
  type DurableDeferredPublish,
  type InterventionAction,
  type OwedNotificationPoint,
  type RuntimeStore,
  type StoredCallerHook,
  type StoredIntervention,
  type StoredOperation,
  type ToolMessage,
} from './runtime-store.port.js';
import {
  IdempotencyKeyReusedError,
  InterventionNotPendingError,
  OperationCompletedError,
  RunBlockedError,
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
import type { SubAgentStart } from './sub-agent.port.js';
import { STEP_SCHEDULER, type StepHost, type StepScheduler } from './step-scheduler.port.js';
import { LeaseHolder } from './lease-holder.js';
import { CompletionWaits } from './completion-waits.js';
import { LiveOperations } from './live-operations.js';
import { StepDrain } from './step-drain.js';
import { RECOVERY_SETTINGS, type RecoverySettings } from './recovery-settings.js';
import { StepExecutor } from './step-executor.js';
import { terminalFailure } from './error-summary.js';
import { isLimitReason } from './run-limits.js';
import { LiveOperation } from './live-operation.js';
import { handedOut } from './handed-out.js';
import { emptyResult, resultFrom, resultOf, type OperationResult } from './operation-result.js';
import { storedContext } from './run-context-snapshot.js';
import { ApprovalEdits } from './approval-edits.js';
import { InterventionNotifier, type DecisionDetail, type NotificationClaim } from './intervention-notifier.js';
import { TerminalSequence, type CompletedState, type ParentReport } from './terminal-sequence.js';
import { claimantId } from './claimant-ids.js';
import { FIRST_VERSION } from './run-start.js';
import { DeferredResults, type GoOn } from './deferred-results.js';
import { ownerOf, type ExecAgentInput } from './exec-agent-input.js';
import { TOOL_CATALOG, type ToolCatalog } from './tools/tool-types.js';
import { AgentTracer } from '../tracing/agent-tracer.js';


export type { ExecAgentInput } from './exec-agent-input.js';

/** A child operation (`agents/call`): what `start` needs beyond a caller's input. */
interface ChildLink {
  parentOperationId: string;
  parentToolCallId: string;
  threadId: string;
  /** The parent's persisted caller hooks: a sub-agent is no way around the caller's policy. */
  callerHooks: StoredCallerHook[];
}

export type { OperationResult } from './operation-result.js';

/** Operations in one chain of `agents/call`, the top-level one included. */
export const MAX_SUB_AGENT_DEPTH = 5;

/** Internal: not exported from the package; hosts use `AgentRuntime`. */
@Injectable()
export class OperationRunner implements OnApplicationBootstrap, StepHost {
  private readonly logger = new Logger('AgentRuntime');
  /** This runtime instance, in claims it makes (owed terminal sequences). */
  private readonly instanceId = `${process.pid}:${randomUUID()}`;
  /** The sub-agent bridge's way to a parent (P5): a deferred completion, like a posted result. */
  private readonly reportToParent: ParentReport = (parentOperationId, parentToolCallId, result) => this.completeDeferred(parentOperationId, parentToolCallId, result);
  /** How a deferred result that made the operation runnable again lets it go on. */
  private readonly goOnHere: GoOn = (operationId, live) => this.goOn(operationId, live);
  /** Set once the application bootstrapped: every `@Tool` and `@OnHook` was discovered at module init. */
  private bootstrapped = false;

  constructor(
    private readonly dispatcher: HookDispatcher,
    private readonly registry: HookRegistry,
    private readonly executor: StepExecutor,
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
    @Inject(AGENT_DIRECTORY) private readonly agents: AgentDirectory,
    @Inject(TOOL_CATALOG) private readonly catalog: ToolCatalog,
    private readonly leases: LeaseHolder,
    @Inject(RECOVERY_SETTINGS) private readonly recovery: RecoverySettings,
    private readonly waits: CompletionWaits,
    private readonly live: LiveOperations,
    /** G4: whether the app closes, the signals steps see, the work the drain waits for. */
    private readonly shutdown: StepDrain,
    private readonly notifier: InterventionNotifier,
    private readonly edits: ApprovalEdits,
    private readonly terminal: TerminalSequence,
    private readonly deferred: DeferredResults,
    private readonly tracer: AgentTracer,
    /** Who runs the steps: this process under the lease (local mode) or any queue worker (queue mode). */
    @Inject(STEP_SCHEDULER) private readonly scheduler: StepScheduler,
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
    if (this.shutdown.stopped) throw new RuntimeShuttingDownError();
    if (!this.agents.agent(input.agentId)) throw new UnknownAgentError(input.agentId);
    if (typeof input.prompt !== 'string') throw new TypeError('prompt must be a string');
    // Validated before anything is registered or stored; a sub-agent runs with its own agent's tools only.
    const clientTools = input.clientTools !== undefined ? this.catalog.declareClientTools(input.clientTools) : [];
    const ownerId = ownerOf(input);
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
    // SPEC O1, O3: `invoke_agent` under the caller's context (an inbound traceparent, a parent's tool call);
    // its context is stored, so every later step joins this trace wherever it runs.
    const traced = this.tracer.startOperation(input.agentId, operationId);
    // Local mode: created with this process's lease, which its first step runs under (no second statement to take it).
    const lease = this.scheduler.leaseAtCreate?.();
    let stored;
    try {
      stored = await this.store.createOperation({
        id: operationId,
        agentId: input.agentId,
        prompt: input.prompt,
        runContext: storedContext(runContext),
        callerHooks,
        ...(child ? { parentOperationId: child.parentOperationId, parentToolCallId: child.parentToolCallId, threadId: child.threadId } : {}),
        ...(ownerId !== undefined ? { ownerId } : {}),
        ...(input.idempotencyKey !== undefined ? { idempotencyKey: input.idempotencyKey } : {}),
        ...(input.idempotencyKey !== undefined && input.idempotencyDigest !== undefined ? { idempotencyDigest: input.idempotencyDigest } : {}),
        ...(clientTools.length > 0 ? { clientTools } : {}),
        ...(traced.stored ? { traceContext: traced.stored } : {}),
        ...(lease ? { lease } : {}),
      });
    } catch (error) {
      this.registry.unregister(operationId);
      traced.span.fail(errorType(error));
      traced.span.end();
      throw error;
    }
    if (stored.id !== operationId) {
      traced.span.end();
      // The idempotency key named an existing operation: answer with it, start nothing new.
      this.registry.unregister(operationId);
      // G8: unless it was created from another request (both digests known and different).
      if (input.idempotencyDigest !== undefined && stored.idempotencyDigest !== undefined && stored.idempotencyDigest !== input.idempotencyDigest) {
        throw new IdempotencyKeyReusedError();
      }
      // Already completed: `done` is read from that row, with no wait on its events.
      if (stored.status === 'completed') return { operationId: stored.id, done: handedOut(this.completedResult(stored)) };
      // One watcher per operation and process, however many retries ask for it.
      const existing = this.live.get(stored.id) ?? this.live.ensure(stored);
      return { operationId: stored.id, done: existing.done, live: existing };
    }
    const live = new LiveOperation(runContext);
    this.live.add(operationId, live);
    live.trace = { id: operationId, agentId: input.agentId, ...(traced.stored ? { traceContext: traced.stored } : {}) };
    // The span lasts while this process drives the operation; later steps, here or elsewhere, are its children.
    live.holdTraceRoot(traced.span);
    const created = lease ? { operation: stored, leaseOwner: lease.owner } : undefined;
    this.tracer.within(traced.span, () => this.scheduler.begin(operationId, live, this, created));
    return { operationId, done: live.done, live };
  }

  /**
   * Starts a sub-agent for the parent's `agents/call` (SubAgents port): its own operation and `threadId`,
   * the parent's owner, identity and persisted caller hooks. Its answer reaches the parent only through
   * the completion bridge of its terminal sequence (P5, terminal-sequence.ts).
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
    if (isLimitReason(result.reason)) throw new RunLimitError(result.reason, operationId, live?.limit);
    if (result.reason === 'interrupted') throw new RunCancelledError(operationId);
    if (result.reason === 'blocked') throw new RunBlockedError(operationId);
    throw live?.error ?? new RunFailedError(operationId, 'Error');
  }

  /**
   * Cancels an operation: the signal reaches the model call, the tool and the webhooks of a running step;
   * a waiting operation ends at once. Either way the terminal sequence runs once, reason `interrupted`.
   */
  async cancel(operationId: string): Promise<void> {
    const operation = await this.operation(operationId);
    if (operation.status === 'completed') return;
    const live = this.live.ensure(operation);
    if (live.stepLoopHere) {
      live.controller.abort(new RunCancelledError(operationId));
      return;
    }
    // The operation's caller hooks, restored if this process never had them (L2): its terminal sequence is
    // theirs too, and whether anything observes it decides whether the transition leaves it owed.
    await this.executor.restoreCallerHooks(operationId);
    await this.finish(operationId, live, 'interrupted');
  }

  /**
   * Approves a pending call (SPEC A3), with edited `args` checked first (F6): it runs, through every hook, when the operation resumes. The decision,
   * "runnable again" and the owed `afterHumanIntervention` commit together (G3); the hook is delivered after the commit, then the operation goes on.
   */
  async approve(operationId: string, toolCallId: string, options: { decidedBy?: string; args?: Record<string, unknown> } = {}): Promise<void> {
    const args = options.args === undefined ? undefined : await this.edits.check(operationId, toolCallId, options.args);
    const { operation, item, decided, claim } = await this.decide(operationId, toolCallId, { action: 'approve', ...(options.decidedBy !== undefined ? { decidedBy: options.decidedBy } : {}), ...(args ? { args } : {}) }, 'afterHumanIntervention');
    await this.notifyThenGoOn(operation, item, this.live.ensure(operation), decided, claim, args ? { argsEdited: true } : {});
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
      const { operation, item, decided, claim } = await this.decide(operationId, toolCallId, decision, 'afterHumanIntervention');
      const live = this.live.ensure(operation);
      await this.notifyThenGoOn(operation, item, live, decided, claim, reason);
      return;
    }
    const holder = this.terminalHolder();
    // This process runs the stop's terminal sequence: its own completion event must not settle `done` (and
    // drop the caller hooks) before `onStopByHumanIntervention` and `onComplete` ran.
    const early = this.live.get(operationId);
    early?.beginFinishing();
    let committed;
    try {
      committed = await this.decide(operationId, toolCallId, decision, 'onStopByHumanIntervention', holder);
    } catch (error) {
      early?.cancelFinishing();
      throw error;
    }
    const { operation, item, decided, claim } = committed;
    const live = this.live.ensure(operation);
    live.beginFinishing();
    // Held from the commit on, so a slow notification does not let a reconciler run the sequence too.
    const holding = decided.completed ? this.leases.holdTerminal(operationId, holder) : undefined;
    // A step of this process still running (the decision landed before it paused) stops at its next commit.
    // The notification and the terminal sequence belong to the operation's trace (O3), not the decider's.
    await this.tracer.segment(operation, async () => {
      try {
        await this.notifier.deliverOwned(operation, item, live.runContext, decided.owed, reason, claim);
      } finally {
        await this.afterTransition(operationId, live, 'interrupted', undefined, decided.completed ? holder : undefined, holding);
      }
    });
  }

  /**
   * The result of a deferred call arrives (L4, P3, P4): its after-chain, then the compare-and-set publish
   * (`DeferredResults`, deferred-results.ts); the first final write wins. If the publish made the operation
   * runnable again, it goes on here (local) or on the queue.
   */
  completeDeferred(operationId: string, toolCallId: string, result: { content: string; success?: boolean }): Promise<{ published: true }> {
    return this.deferred.complete(operationId, toolCallId, result, this.goOnHere);
  }

  /**
   * SPEC G3, for `OwedWork.finishReceivedDeferred`: a received result whose decider died, claimed by
   * `claimant`, is decided and published like a posted one, and the operation goes on from here if resumed.
   */
  finishReceived(operation: StoredOperation, item: StoredIntervention, result: { content: string; success?: boolean }, claimant: string): Promise<DurableDeferredPublish> {
    return this.deferred.finishReceived(operation, item, result, claimant, this.goOnHere);
  }

  /**
   * Resolves with the operation's result once it is completed, here or in another process. Like every
   * `done`, never an unhandled rejection when the app closes before it settles.
   */
  result(operationId: string): Promise<OperationResult> {
    const live = this.live.get(operationId);
    return live ? live.done : handedOut(this.resultOfStored(operationId));
  }

  /** An operation this process is not driving: from its row when completed, else once its events say so (G2). */
  private async resultOfStored(operationId: string): Promise<OperationResult> {
    const stored = await this.operation(operationId);
    if (stored.status === 'completed') return this.completedResult(stored);
    await this.waits.whenCompleted(operationId);
    const operation = await this.operation(operationId);
    return resultOf(this.store, operationId, operation.reason ?? 'done');
  }

  /** The result of a row already read as completed: its messages are the one read left. */
  private async completedResult(operation: StoredOperation): Promise<OperationResult> {
    return resultFrom(operation.id, operation, await this.store.messages(operation.id), operation.reason ?? 'done');
  }

  /**
   * G4 step 1 (the `ShutdownCoordinator` calls it first): no new operation, decision or step is taken here
   * from now on; the steps in flight see `stopping` and end at their next boundary (local mode: reason
   * `interrupted`, as before; queue mode: handed back to the queue).
   */
  stopTakingSteps(): void {
    this.shutdown.stopTaking();
  }

  /**
   * G4 step 2: waits for the steps in flight; a tool call still running after `graceMs` is cut — it
   * publishes nothing and its step is handed back. Resolves once nothing of a step runs any more, while
   * every client (MCP, webhooks, Redis, the database) is still open.
   */
  async drain(graceMs: number): Promise<void> {
    await this.shutdown.drain(graceMs);
    // Waiting and handed-back operations stay in the database for whoever resumes or reconciles them; a
    // `done` of this app can no longer settle, so it rejects instead of hanging.
    this.live.abandonAll(() => new RuntimeShuttingDownError());
    this.waits.stop();
  }

  /**
   * The reconciler found a running operation nobody holds (its process died, or it handed the step back):
   * local mode drives it here (a no-op while it does so already or closes), queue mode enqueues it again.
   */
  adopt(operationId: string): Promise<void> {
    return this.scheduler.adopt(operationId, this);
  }

  /** `on_run_start` once per operation; a replaced context is stored, so a resume elsewhere sees it too. */
  async runStart(operationId: string, live: LiveOperation, leaseOwner?: string): Promise<void> {
    const options = { operationId, environment: this.dispatcher.environmentSnapshot() };
    // Under a lease (local mode, or a worker's takeover) the first step follows here at once: when nothing here
    // observes the start (no hook of any family, no subscriber), nothing would run or change, so nothing is
    // committed (E3); a process that takes the operation over before that step committed runs
    // `on_run_start` for whatever it observes, as this one did for nothing (G2). Queue mode's creator (no
    // lease) always commits: the point belongs where the caller's identity is, never to a worker.
    if (leaseOwner !== undefined && !this.dispatcher.isObserved('on_run_start', options)) return;
    const started = await this.dispatcher.transform('on_run_start', live.runContext, options);
    const changed = started !== live.runContext;
    live.runContext = started;
    // Committed even when nothing changed: an operation still at its first version never ran `on_run_start`,
    // so a process that takes it over after its creator died runs it (`neverStarted`, G2).
    await this.store.commit(operationId, FIRST_VERSION, undefined, changed ? { runContext: storedContext(started) } : {}, leaseOwner);
  }

  /**
   * The operation was made runnable again by a commit of this process (a decision, a deferred result): it
   * goes on here (local mode) or on the queue. While the app closes it stays running in the database, and
   * the reconciler of whichever process runs next takes it over (G2, G4).
   */
  private goOn(operationId: string, live: LiveOperation): Promise<void> {
    return this.scheduler.goOn(operationId, live, this);
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
  ): Promise<{ operation: StoredOperation; item: StoredIntervention; decided: DurableDecision; claim: NotificationClaim }> {
    if (this.shutdown.stopped) throw new RuntimeShuttingDownError();
    const [operation, items] = await Promise.all([this.operation(operationId), this.store.interventions(operationId)]);
    const item = items.find((i) => i.toolCallId === toolCallId && i.kind === 'approval');
    if (!item) throw new UnknownInterventionError(operationId, toolCallId, 'approval');
    // A decided item stays `not_pending` after the end; an open one of a completed operation is G5's.
    if (item.status !== 'pending') throw new InterventionNotPendingError(operationId, toolCallId);
    if (operation.status === 'completed') throw new OperationCompletedError(operationId, toolCallId);
    const call = { id: item.toolCallId, identifier: item.identifier, apiName: item.apiName, args: item.args };
    // The owed notification is inserted claimed by this decision, which renews the claim while it delivers.
    const claim: NotificationClaim = { owner: claimantId(this.instanceId, 'owed'), holdMs: this.recovery.leaseMs };
    const decided = await this.store.decideDurably(operationId, toolCallId, decision, {
      notify: [notify],
      claimant: claim.owner,
      holdMs: claim.holdMs,
      // The stop receipt holds no tool output: published directly (P2), with the terminal transition.
      ...(decision.action === 'reject' ? { receipt: rejectionReceipt(call, decision.reason) as ToolMessage } : {}),
      ...(terminalHolder !== undefined ? { terminalHold: { owner: terminalHolder, ms: this.recovery.leaseMs } } : {}),
    });
    if (decided.outcome === 'operation_completed') throw new OperationCompletedError(operationId, toolCallId);
    if (decided.outcome === 'not_pending') throw new InterventionNotPendingError(operationId, toolCallId);
    // The operation's caller hooks, restored if this process never had them (L2).
    await this.executor.restoreCallerHooks(operationId);
    return { operation, item, decided, claim };
  }

  /**
   * After a decision that made the operation runnable: its lease is taken first (local mode), so no
   * reconciler drives the approved call while a slow `afterHumanIntervention` is still being delivered;
   * then the notification; then the step, under that lease. Nothing observing the notification, the step
   * goes on at once and the decider does not wait for the owed row's record. The decision is committed: a failing hook (a
   * `fallback: 'none'` delivery) must not leave the run stuck — it goes on, and the error reaches the caller.
   */
  private notifyThenGoOn(operation: StoredOperation, item: StoredIntervention, live: LiveOperation, decided: DurableDecision, claim: NotificationClaim, detail: DecisionDetail): Promise<void> {
    const notify = () => this.notifier.deliverOwned(operation, item, live.runContext, decided.owed, detail, claim);
    // Unobserved (E3): the owed rows committed with the decision (G3) are recorded delivered beside the step, unawaited.
    const unobserved = !this.notifier.observed(operation.id, live.runContext, decided.owed);
    // In the operation's trace (O3): the notification's traceparent and the steps it lets go on.
    return this.tracer.segment(operation, () => {
      if (unobserved) this.shutdown.track(notify());
      if (decided.resumed) return unobserved ? this.goOn(operation.id, live) : this.scheduler.goOnAfter(notify, operation.id, live, this);
      return unobserved ? Promise.resolve() : notify();
    });
  }


  /** Who holds a terminal sequence this process is about to run. */
  private terminalHolder(): string {
    return claimantId(this.instanceId, 'terminal');
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
  finish(operationId: string, live: LiveOperation, reason: TerminalReason, leaseOwner?: string): Promise<void> {
    // The terminal sequence belongs to the operation's trace (O3), wherever and whenever it runs.
    return this.tracer.segment(live.trace, () => this.end(operationId, live, reason, leaseOwner));
  }

  private async end(operationId: string, live: LiveOperation, reason: TerminalReason, leaseOwner?: string): Promise<void> {
    live.beginFinishing();
    const error = live.error;
    const holder = this.terminalHolder();
    // Nobody here observes the terminal points: nothing a crash could lose, so nothing is held (E3).
    const nothingOwed = !this.terminal.observed(operationId, live.runContext);
    let first = false;
    try {
      const failure = terminalFailure(error, live.limit); // S3: never the error's message; F4: the limit reached
      // This process holds the terminal sequence while it runs; if it dies, a reconciler takes it over (G2).
      first = await this.store.complete(operationId, reason, failure, {
        owner: holder,
        ms: this.recovery.leaseMs,
        ...(leaseOwner !== undefined ? { leaseOwner } : {}),
        ...(nothingOwed ? { nothingOwed } : {}),
      });
      if (first && failure && error !== undefined) this.logger.error(`operation ${operationId} failed: ${failure.type}: ${failure.summary}`);
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
    await this.afterTransition(operationId, live, reason, error, first ? holder : undefined, undefined, first && nothingOwed);
  }

  /** The operation goes on without this process (its lease moved, or its end could not be written): watch it. */
  private letGo(operationId: string, live: LiveOperation): void {
    live.letGo();
    this.live.watch(operationId, live);
  }

  /**
   * After the terminal transition: the terminal sequence (only by `holder`, the one that made the
   * transition, renewing its hold meanwhile — from `holding` if the caller started that already), then
   * `done` settles and what follows it runs. `nothingOwed`: the transition was made with
   * `TerminalHold.nothingOwed`, so an operation without a parent has its sequence recorded done already.
   */
  private async afterTransition(
    operationId: string,
    live: LiveOperation,
    reason: TerminalReason,
    error: unknown,
    holder: string | undefined,
    holding?: () => void,
    nothingOwed = false,
  ): Promise<void> {
    live.beginFinishing();
    // Completed by `holder`: read once for the hooks and the result both, not once each.
    const read = holder !== undefined ? await this.completedState(operationId) : undefined;
    // As the transition's CASE decided: recorded unless the operation has a parent (or was not read).
    const recorded = nothingOwed && !!read?.operation && read.operation.parentOperationId === undefined;
    const stopHolding = holding ?? (holder !== undefined && !recorded ? this.leases.holdTerminal(operationId, holder) : () => undefined);
    try {
      if (holder !== undefined) await this.terminal.hooks(operationId, live, reason, error, read);
    } catch (failure) {
      this.logger.error(`terminal sequence of ${operationId} failed (${errorType(failure)})`);
    }
    try {
      const stored = read ? read.operation : await this.store.getOperation(operationId).catch(() => null);
      const result = read
        ? resultFrom(operationId, read.operation, read.messages, stored?.reason ?? reason)
        : await resultOf(this.store, operationId, stored?.reason ?? reason).catch(() => emptyResult(operationId, reason));
      this.live.release(operationId, live, result);
      if (holder !== undefined && stored) await this.terminal.after(stored, result, this.reportToParent, recorded);
    } finally {
      stopHolding();
    }
  }

  /** A completed operation and its conversation; undefined when they could not be read (each step then reads its own). */
  private completedState(operationId: string): Promise<CompletedState | undefined> {
    return this.store.completedState(operationId).catch(() => undefined);
  }
}

