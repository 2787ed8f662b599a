/**
 * Starting operations (DESIGN §3): a caller's (`execAgent`, `run`), a sub-agent's (`agents/call`, V1) and an
 * orphan the reconciler adopts (G2). Caller hooks are registered in memory for the life of the operation
 * and unregistered at its end (A4); their webhook parts are persisted with the operation (W3, L2).
 *
 * Steps are the `StepScheduler`'s (step-scheduler.port.ts): in this process under the operation's lease
 * (local mode, SPEC G2) or as queue jobs on any worker. This class is the `StepHost` the scheduler calls
 * back into: `on_run_start` once per operation, the children of a step's `agents/call`, the completion of
 * a deferred call, and the terminal transition (`TerminalTransition`, terminal-transition.ts). An
 * operation that waits (approval, deferred result) holds no step and no timer: its `done` follows the
 * operation's events, so it may be resumed here or by another process on the same database, and `done`
 * settles wherever it ends. Human decisions are `HumanDecisions`' (human-decisions.ts).
 */
import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { AgentHook } from '../hooks/agent-hook.js';
import type { TerminalReason } from '../hooks/agent-events.js';
import { RunContext } from '../hooks/contexts.js';
import { errorType } from '../hooks/hook-errors.js';
import { HookDispatcher } from '../hooks/hook-dispatcher.js';
import { HookRegistry } from '../hooks/hook-registry.js';
import { AgentTracer } from '../tracing/agent-tracer.js';
import { AGENT_DIRECTORY, type AgentDirectory } from './agent-directory.port.js';
import { DeferredResults, type GoOn } from './deferred-results.js';
import { ownerOf, type ExecAgentInput } from './exec-agent-input.js';
import { existingOperation } from './existing-operation.js';
import { handedOut } from './handed-out.js';
import { LiveOperation } from './live-operation.js';
import { LiveOperations } from './live-operations.js';
import { completedResult, type OperationResult } from './operation-result.js';
import { storedContext } from './run-context-snapshot.js';
import { isLimitReason } from './run-limits.js';
import { FIRST_VERSION } from './run-start.js';
import {
  IdempotencyKeyReusedError,
  RunBlockedError,
  RunCancelledError,
  RunFailedError,
  RunLimitError,
  RuntimeNotReadyError,
  RuntimeShuttingDownError,
  SubAgentDepthError,
  UnknownAgentError,
} from './runtime-errors.js';
import { RUNTIME_STORE, type RuntimeStore, type StoredCallerHook } from './runtime-store.port.js';
import { StepDrain } from './step-drain.js';
import { STEP_SCHEDULER, type StepHost, type StepScheduler } from './step-scheduler.port.js';
import type { SubAgentStart } from './sub-agent.port.js';
import { TerminalTransition } from './terminal-transition.js';
import type { ParentReport } from './terminal-sequence.js';
import { TOOL_CATALOG, type ToolCatalog } from './tools/tool-types.js';

/** A child operation (`agents/call`): what `start` needs beyond a caller's input. */
interface ChildLink {
  parentOperationId: string;
  parentToolCallId: string;
  threadId: string;
  /** The parent's persisted caller hooks: a sub-agent is no way around the caller's policy. */
  callerHooks: StoredCallerHook[];
}

/** Operations in one chain of `agents/call`, the top-level one included. */
export const MAX_SUB_AGENT_DEPTH = 5;

/** Internal: not exported from the package; hosts use `AgentRuntime`. */
@Injectable()
export class OperationStart implements OnApplicationBootstrap, StepHost {
  /** The sub-agent bridge's way to a parent (P5): a deferred completion, like a posted result. */
  readonly reportToParent: ParentReport = (parentOperationId, parentToolCallId, result) => this.completeDeferred(parentOperationId, parentToolCallId, result);
  /** How a deferred result that made the operation runnable again lets it go on. */
  private readonly goOnHere: GoOn = (operationId, live) => this.goOn(operationId, live);
  /** Set once the application bootstrapped: every `@Tool` and `@OnHook` was discovered at module init. */
  private bootstrapped = false;

  constructor(
    private readonly dispatcher: HookDispatcher,
    private readonly registry: HookRegistry,
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
    @Inject(AGENT_DIRECTORY) private readonly agents: AgentDirectory,
    @Inject(TOOL_CATALOG) private readonly catalog: ToolCatalog,
    private readonly live: LiveOperations,
    /** G4: whether the app closes. */
    private readonly shutdown: StepDrain,
    private readonly deferred: DeferredResults,
    private readonly transition: TerminalTransition,
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
      if (stored.status === 'completed') return { operationId: stored.id, done: handedOut(completedResult(this.store, stored)) };
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
    const parent = await existingOperation(this.store, start.parentOperationId);
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

  /** The terminal transition and sequence (`TerminalTransition.finish`); `leaseOwner`: a step's own end. */
  finish(operationId: string, live: LiveOperation, reason: TerminalReason, leaseOwner?: string): Promise<void> {
    return this.transition.finish(operationId, live, reason, this.reportToParent, leaseOwner);
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
   * The reconciler found a running operation nobody holds (its process died, or it handed the step back):
   * local mode drives it here (a no-op while it does so already or closes), queue mode enqueues it again.
   */
  adopt(operationId: string): Promise<void> {
    return this.scheduler.adopt(operationId, this);
  }

  /**
   * The operation was made runnable again by a commit of this process (a decision, a deferred result): it
   * goes on here (local mode) or on the queue. While the app closes it stays running in the database, and
   * the reconciler of whichever process runs next takes it over (G2, G4).
   */
  goOn(operationId: string, live: LiveOperation): Promise<void> {
    return this.scheduler.goOn(operationId, live, this);
  }

  /**
   * A decision made the operation runnable; `notify` delivers its owed notification. Local mode takes the
   * lease first, so no reconciler drives the approved call while a slow notification is delivered.
   */
  goOnAfter(notify: () => Promise<void>, operationId: string, live: LiveOperation): Promise<void> {
    return this.scheduler.goOnAfter(notify, operationId, live, this);
  }
}
