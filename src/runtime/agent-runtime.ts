/**
 * The public runtime API (DESIGN §6): `execAgent`, `run`, `cancel`. It owns the per-operation lifecycle:
 * `on_run_start` once, steps until a terminal reason, and the terminal sequence of DESIGN §3, exactly once:
 * `done` → `onComplete` → `on_run_end`; otherwise `onError` (reason `error` only) → `onComplete` →
 * `on_run_error`. Caller hooks are registered in memory for the life of the operation and unregistered
 * at its end (A4); their webhook parts are persisted with the operation (W3, L2).
 */
import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { AgentHook } from '../hooks/agent-hook.js';
import type { TerminalReason, UsageTotals } from '../hooks/agent-events.js';
import { AuthContext, RunContext, RunEndContext } from '../hooks/contexts.js';
import { errorType } from '../hooks/hook-errors.js';
import { HookDispatcher } from '../hooks/hook-dispatcher.js';
import { HookRegistry } from '../hooks/hook-registry.js';
import { AGENT_DIRECTORY, type AgentDirectory } from './agent-directory.port.js';
import { RUNTIME_STORE, type RuntimeStore, type StoredCallerHook, type StoredRunContext } from './runtime-store.port.js';
import { RunCancelledError, RunFailedError, RunLimitError, UnknownAgentError } from './runtime-errors.js';
import { StepExecutor } from './step-executor.js';
import { agentEventBase } from './agent-event-base.js';

export interface ExecAgentInput {
  agentId: string;
  prompt: string;
  hooks?: AgentHook[];
  context?: RunContext;
  ownerId?: string;
  idempotencyKey?: string;
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
  toolCalls: number;
  error?: unknown;
  done: Promise<OperationResult>;
}

/** How often `done` of an operation driven elsewhere checks the database. */
const COMPLETION_POLL_MS = 200;

@Injectable()
export class AgentRuntime implements OnApplicationShutdown {
  private readonly logger = new Logger('AgentRuntime');
  private readonly live = new Map<string, LiveOperation>();

  constructor(
    private readonly dispatcher: HookDispatcher,
    private readonly registry: HookRegistry,
    private readonly executor: StepExecutor,
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
    @Inject(AGENT_DIRECTORY) private readonly agents: AgentDirectory,
  ) {}

  /** Starts an operation; `done` resolves with `{ status: 'completed', reason }` whatever the reason. */
  async execAgent(input: ExecAgentInput): Promise<{ operationId: string; done: Promise<OperationResult> }> {
    const { operationId, done } = await this.start(input);
    return { operationId, done };
  }

  private async start(input: ExecAgentInput): Promise<{ operationId: string; done: Promise<OperationResult>; live?: LiveOperation }> {
    if (!this.agents.agent(input.agentId)) throw new UnknownAgentError(input.agentId);
    if (typeof input.prompt !== 'string') throw new TypeError('prompt must be a string');
    const operationId = randomUUID();
    // Validates the whole batch before anything is stored (A1); handlers stay in memory only (W3).
    const registered = this.registry.register(operationId, input.hooks ?? []);
    const callerHooks: StoredCallerHook[] = [];
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
        ...(input.ownerId !== undefined ? { ownerId: input.ownerId } : {}),
        ...(input.idempotencyKey !== undefined ? { idempotencyKey: input.idempotencyKey } : {}),
      });
    } catch (error) {
      this.registry.unregister(operationId);
      throw error;
    }
    if (stored.id !== operationId) {
      // The idempotency key named an existing operation: answer with it, start nothing new.
      this.registry.unregister(operationId);
      const existing = this.live.get(stored.id);
      return { operationId: stored.id, done: existing?.done ?? this.whenCompleted(stored.id), ...(existing ? { live: existing } : {}) };
    }
    const live: LiveOperation = {
      controller: new AbortController(),
      runContext,
      startedAt: performance.now(),
      steps: 0,
      toolCalls: 0,
      done: undefined as unknown as Promise<OperationResult>,
    };
    this.live.set(operationId, live);
    live.done = this.drive(operationId, live);
    return { operationId, done: live.done, live };
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

  /** Cancels a running operation: the signal reaches the model call, the tool and the webhooks. */
  async cancel(operationId: string): Promise<void> {
    const live = this.live.get(operationId);
    if (live) {
      live.controller.abort(new RunCancelledError(operationId));
      return;
    }
    const operation = await this.store.getOperation(operationId);
    if (!operation) throw new Error(`operation ${operationId} does not exist`);
    if (operation.status !== 'completed') await this.store.complete(operationId, 'interrupted');
  }

  /** An operation this process is not driving: resolves once the database shows it completed. */
  private async whenCompleted(operationId: string): Promise<OperationResult> {
    for (;;) {
      const operation = await this.store.getOperation(operationId);
      if (!operation) throw new Error(`operation ${operationId} does not exist`);
      if (operation.status === 'completed') {
        const lastAssistant = (await this.store.messages(operationId)).findLast((m) => m.role === 'assistant');
        return { operationId, status: 'completed', reason: operation.reason ?? 'done', content: lastAssistant?.content ?? '', usage: operation.usage };
      }
      await new Promise((resolve) => setTimeout(resolve, COMPLETION_POLL_MS).unref());
    }
  }

  async onApplicationShutdown(): Promise<void> {
    for (const live of this.live.values()) live.controller.abort(new Error('shutting down'));
    await Promise.allSettled([...this.live.values()].map((live) => live.done));
  }

  private async drive(operationId: string, live: LiveOperation): Promise<OperationResult> {
    let reason: TerminalReason = 'error';
    try {
      const started = await this.dispatcher.transform('on_run_start', live.runContext, { operationId });
      live.runContext = started;
      for (;;) {
        const result = await this.executor.step({ operationId, runContext: live.runContext, signal: live.controller.signal });
        live.steps++;
        if (result) {
          reason = result.terminal;
          break;
        }
      }
    } catch (error) {
      reason = live.controller.signal.aborted ? 'interrupted' : 'error';
      if (reason === 'error') live.error = error;
    }
    return this.finish(operationId, live, reason);
  }

  private async finish(operationId: string, live: LiveOperation, reason: TerminalReason): Promise<OperationResult> {
    const error = live.error;
    try {
      const first = await this.store.complete(
        operationId,
        reason,
        error !== undefined ? { type: errorType(error), message: error instanceof Error ? error.message : String(error) } : undefined,
      );
      if (first) await this.terminalHooks(operationId, live, reason, error);
    } catch (failure) {
      this.logger.error(`terminal transition of ${operationId} failed (${errorType(failure)})`);
    } finally {
      this.registry.unregister(operationId);
      this.live.delete(operationId);
    }
    const operation = await this.store.getOperation(operationId);
    const messages = await this.store.messages(operationId);
    const lastAssistant = messages.findLast((m) => m.role === 'assistant');
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
