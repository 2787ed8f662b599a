/**
 * The one owner of the shutdown order (SPEC G4), for the module in a host app and for `agentctl serve` /
 * `agentctl worker` alike (they close the app; this does the rest). No room closes its clients on a
 * lifecycle hook of its own: each exposes a `close()`/`stop()` this provider calls, in this order:
 *
 * 1. stop taking steps — the runtime refuses new operations and decisions, the reconciler stops, the
 *    queue workers take no more jobs;
 * 2. let each running step finish its current tool call within the grace period (`shutdown.graceMs`,
 *    else `SHUTDOWN_GRACE_MS`, else 10 s); a call still running then is cut, publishes nothing, and its
 *    step is handed back (the operation: local mode `interrupted`, as before; queue mode back on the queue);
 * 3. flush the timeline, then complete the read API's followers (`events()`, `changes()`);
 * 4. `on_engine_stop`, then close MCP clients, webhook clients, Redis, the database.
 *
 * Why these two hooks: Nest runs `onModuleDestroy` of every module, then `beforeApplicationShutdown` of
 * every module, then closes the HTTP server, then `onApplicationShutdown`. Steps 1–3 are in
 * `beforeApplicationShutdown`, so nothing may close in `onModuleDestroy` (that is what let a tool call end
 * on a closed MCP client). Step 4 waits for `onApplicationShutdown`: by then the HTTP server is closed, so
 * no request still in flight finds the database or a client gone. Within one module Nest calls a hook on
 * all providers at once, so this provider is the only one in the module with shutdown hooks.
 */
import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationShutdown } from '@nestjs/common';
import { AGENT_HOOKS_MODULE_OPTIONS } from './agent-hooks.module-definition.js';
import type { AgentHooksModuleOptions } from './agent-hooks.options.js';
import { errorType } from './hooks/hook-errors.js';
import { OperationEventsService } from './persistence/operation-events.service.js';
import { RuntimeDatabase } from './persistence/runtime-database.js';
import { WebhookDeliveryWorkerHost } from './queue/delivery/webhook-delivery-worker.host.js';
import { QueuedDeliveryService } from './queue/delivery/queued-delivery.service.js';
import { RedisOperationDeltas } from './queue/redis-operation-deltas.js';
import { StepQueue } from './queue/step-queue.js';
import { StepWorker } from './queue/step-worker.js';
import { EngineLifecycle } from './runtime/engine-lifecycle.js';
import { OperationReconciler } from './runtime/operation-reconciler.js';
import { LiveOperations } from './runtime/live-operations.js';
import { OperationChanges } from './runtime/reading/operation-changes.js';
import { OperationFollower } from './runtime/reading/operation-follower.js';
import { RUNTIME_STORE, type RuntimeStore } from './runtime/runtime-store.port.js';
import { StepDrain } from './runtime/step-drain.js';
import { McpServersService } from './runtime/tools/mcp-servers.service.js';
import { WebhookDeliveryService } from './webhooks/webhook-delivery.service.js';

/** Inside the server's 25 s shutdown deadline (`SHUTDOWN_TIMEOUT_MS`), which is inside Kubernetes' 30 s. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;
export const SHUTDOWN_GRACE_ENV = 'SHUTDOWN_GRACE_MS';

export function shutdownGraceMs(options: AgentHooksModuleOptions, env: NodeJS.ProcessEnv = process.env): number {
  const configured = options.shutdown?.graceMs ?? Number(env[SHUTDOWN_GRACE_ENV]);
  return Number.isFinite(configured) && configured >= 0 ? configured : DEFAULT_SHUTDOWN_GRACE_MS;
}

@Injectable()
export class ShutdownCoordinator implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('AgentHooks:Shutdown');
  private readonly graceMs: number;
  private drained: Promise<void> | undefined;
  private closed: Promise<void> | undefined;

  constructor(
    @Inject(AGENT_HOOKS_MODULE_OPTIONS) options: AgentHooksModuleOptions,
    /** G4 for the runtime's own work: whether it takes steps, and the steps in flight. */
    private readonly steps: StepDrain,
    private readonly live: LiveOperations,
    private readonly reconciler: OperationReconciler,
    private readonly stepWorker: StepWorker,
    private readonly deliveryWorker: WebhookDeliveryWorkerHost,
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
    private readonly engine: EngineLifecycle,
    private readonly mcp: McpServersService,
    private readonly webhooks: WebhookDeliveryService,
    private readonly stepQueue: StepQueue,
    private readonly deliveryQueue: QueuedDeliveryService,
    private readonly database: RuntimeDatabase,
    private readonly operationEvents: OperationEventsService,
    private readonly follower: OperationFollower,
    private readonly changes: OperationChanges,
    private readonly deltas: RedisOperationDeltas,
  ) {
    this.graceMs = shutdownGraceMs(options);
  }

  /** Steps 1–3: nothing of a step runs any more and the timeline is written; every client is still open. */
  beforeApplicationShutdown(): Promise<void> {
    this.drained ??= this.drain();
    return this.drained;
  }

  /** Step 4, after the HTTP server closed. */
  async onApplicationShutdown(): Promise<void> {
    await this.beforeApplicationShutdown();
    this.closed ??= this.closeClients();
    return this.closed;
  }

  private async drain(): Promise<void> {
    // 1. Stop taking steps: the runtime first (a job a worker fetched now is handed back at once); the steps
    // in flight see `stopping` and end at their next boundary.
    this.steps.stopTaking();
    await this.step('reconciler', () => this.reconciler.stop());
    // 2. The workers stop fetching and wait for their running jobs while the runtime drains them.
    await Promise.all([
      this.step('steps', () => this.drainSteps()),
      this.step('step worker', () => this.stepWorker.close()),
      this.step('delivery worker', () => this.deliveryWorker.stop()),
    ]);
    // 3. The timeline of the last steps, written while the database is open.
    await this.step('timeline', () => this.store.flushTimeline());
    // The read API's followers (`events()`, `changes()`) complete while the database is still open.
    this.follower.stop();
    this.changes.stop();
  }

  /**
   * Waits for the steps in flight; a tool call still running after the grace period is cut — it publishes
   * nothing and its step is handed back. Then no `done` of this app can settle any more: each rejects.
   */
  private async drainSteps(): Promise<void> {
    await this.steps.drain(this.graceMs);
    this.live.abandonAll();
  }

  private async closeClients(): Promise<void> {
    // `on_engine_stop` may post webhooks: before their client closes.
    await this.step('on_engine_stop', () => this.engine.stop());
    await this.step('MCP clients', () => this.mcp.close());
    await this.step('webhook client', () => this.webhooks.close());
    await this.step('Redis', async () => {
      await Promise.all([this.stepQueue.close(), this.deliveryQueue.close(), this.deltas.close()]);
    });
    // The PostgreSQL listening connection, just before the database it listens to.
    await this.step('operation events', () => this.operationEvents.close());
    await this.step('database', () => this.database.close());
  }

  /** One stage; its failure is logged (type only) and never stops the later ones. */
  private async step(stage: string, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.logger.error(`shutdown: ${stage} failed (${errorType(error)})`);
    }
  }
}
