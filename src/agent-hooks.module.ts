/**
 * `AgentHooksModule.forRoot(options)` / `forRootAsync({ imports, inject, useFactory })`. Every provider is an
 * instance per app: two apps in one process share nothing.
 */
import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AgentHooksConfigurableModule, AGENT_HOOKS_MODULE_OPTIONS } from './agent-hooks.module-definition.js';
import type { AgentHooksModuleOptions } from './agent-hooks.options.js';
import { DISPATCH_PROVIDERS } from './hooks/dispatch.providers.js';
import { HookDispatcher } from './hooks/hook-dispatcher.js';
import { HookExplorer } from './hooks/hook-explorer.js';
import { HookMetadataAccessor } from './hooks/hook-metadata.accessor.js';
import { CALLER_HOOK_VALIDATOR, ENVIRONMENT_HOOK_SOURCE, HOOK_OUTCOME_SINK, WEBHOOK_DELIVERY } from './hooks/hook-ports.js';
import { HookReadinessWatcher } from './hooks/hook-readiness.watcher.js';
import { HookRegistry } from './hooks/hook-registry.js';
import { AGENTS_CONFIG_PROVIDERS } from './config/agents-config.provider.js';
import { EnvironmentSettingsCheck } from './config/environment/environment-settings.check.js';
import { ModelVariablesCheck } from './config/model-variables.check.js';
import { ToolEntriesCheck } from './config/tool-entries.check.js';
import { PERSISTENCE_PROVIDERS } from './persistence/persistence.providers.js';
import { TimelineSink } from './persistence/timeline-sink.js';
import { AgentTracer } from './tracing/agent-tracer.js';
import { TracedOutcomeSink } from './tracing/traced-outcome-sink.js';
import { TRACING_PROVIDERS } from './tracing/tracing.providers.js';
import { RuntimeDatabase } from './persistence/runtime-database.js';
import { OPERATION_EVENTS } from './runtime/operation-events.port.js';
import { OPERATION_READER } from './runtime/operation-read.port.js';
import { DATABASE_MAINTENANCE } from './runtime/database-maintenance.port.js';
import { CompletionWaits } from './runtime/completion-waits.js';
import { AgentRuntime } from './runtime/agent-runtime.js';
import { READING_PROVIDERS } from './runtime/reading/reading.providers.js';
import { OperationChanges } from './runtime/reading/operation-changes.js';
import { OperationFollower } from './runtime/reading/operation-follower.js';
import { OperationReadService } from './runtime/reading/operation-read.service.js';
import { HumanDecisions } from './runtime/human-decisions.js';
import { OperationStart } from './runtime/operation-start.js';
import { TerminalTransition } from './runtime/terminal-transition.js';
import { InterventionNotifier } from './runtime/intervention-notifier.js';
import { ApprovalEdits } from './runtime/approval-edits.js';
import { TerminalSequence } from './runtime/terminal-sequence.js';
import { OwedWork } from './runtime/owed-work.js';
import { DeferredResults } from './runtime/deferred-results.js';
import { LiveOperations } from './runtime/live-operations.js';
import { StepDrain } from './runtime/step-drain.js';
import { EngineLifecycle } from './runtime/engine-lifecycle.js';
import { StepCalls } from './runtime/step-calls.js';
import { StepExecutor } from './runtime/step-executor.js';
import { ToolCallRunner } from './runtime/tool-call.runner.js';
import { ToolCallScope } from './runtime/tools/tool-call-scope.js';
import { CallRouter } from './runtime/call-router.js';
import { QUEUE_PROVIDERS } from './queue/queue.providers.js';
import { DELIVERY_WORKER_PROVIDERS, QUEUED_DELIVERY_PROVIDERS } from './queue/delivery/queued-delivery.providers.js';
import { Compactor } from './runtime/compactor.js';
import { TOOLS_EXPORTS, TOOLS_PROVIDERS } from './runtime/tools/tools.providers.js';
import { EnvironmentWebhookSource } from './webhooks/environment-hooks.js';
import { WebhookCallerHookValidator } from './webhooks/webhook-config.schema.js';
import { WebhookDeliveryService } from './webhooks/webhook-delivery.service.js';
import { ShutdownCoordinator } from './shutdown-coordinator.js';
import { LeaseHolder } from './runtime/lease-holder.js';
import { LocalStepScheduler } from './runtime/local-step-scheduler.js';
import { TracedModelCalls } from './runtime/traced-model-calls.js';
import { GovernedModelCalls } from './runtime/governed-model-call.js';
import { LocalOperationDeltas } from './runtime/streaming/local-operation-deltas.js';
import { OperationReconciler } from './runtime/operation-reconciler.js';
import { RECOVERY_SETTINGS, recoverySettings } from './runtime/recovery-settings.js';

const appUrlOf = (options: AgentHooksModuleOptions) => (options.webhooks?.appUrl ? { appUrl: options.webhooks.appUrl } : {});

@Module({
  imports: [DiscoveryModule],
  providers: [
    // A malformed webhook or queue setting fails init (G7).
    EnvironmentSettingsCheck,
    HookMetadataAccessor,
    HookRegistry,
    // The dispatcher with its gate, invoker and outcome recorder.
    ...DISPATCH_PROVIDERS,
    HookExplorer,
    HookReadinessWatcher,
    WebhookDeliveryService,
    // Queued (BullMQ) and QStash notification delivery: idle until a hook asks for it (QStash works in local mode too).
    ...QUEUED_DELIVERY_PROVIDERS,
    ...DELIVERY_WORKER_PROVIDERS,
    // The webhooks room implements the ports the hooks core declares (DESIGN §2).
    { provide: WEBHOOK_DELIVERY, useExisting: WebhookDeliveryService },
    {
      provide: ENVIRONMENT_HOOK_SOURCE,
      useFactory: (options: AgentHooksModuleOptions) => new EnvironmentWebhookSource(appUrlOf(options)),
      inject: [AGENT_HOOKS_MODULE_OPTIONS],
    },
    {
      provide: CALLER_HOOK_VALIDATOR,
      useFactory: (options: AgentHooksModuleOptions) => new WebhookCallerHookValidator(appUrlOf(options)),
      inject: [AGENT_HOOKS_MODULE_OPTIONS],
    },
    // The runtime: agents from config, tools (local + MCP), persistence opened on first use.
    ...AGENTS_CONFIG_PROVIDERS,
    // G7: unset model variables are warned about at init; tools entries that select nothing fail bootstrap.
    ModelVariablesCheck,
    ToolEntriesCheck,
    ...TOOLS_PROVIDERS,
    // The database (opened on first use), every store built once on it, and the ports over them.
    ...PERSISTENCE_PROVIDERS,
    // SPEC O1–O5: spans to the host's OpenTelemetry SDK, if any; every hook outcome goes to the timeline, then to a span.
    ...TRACING_PROVIDERS,
    // F1: the records of a tool call's hooks name the call (tool-call-scope.ts), so its timeline rows carry the key.
    ToolCallScope,
    {
      provide: HOOK_OUTCOME_SINK,
      useFactory: (timeline: TimelineSink, tracer: AgentTracer, calls: ToolCallScope) => calls.sink(new TracedOutcomeSink(timeline, tracer)),
      inject: [TimelineSink, AgentTracer, ToolCallScope],
    },
    CompletionWaits,
    // SPEC G2 in every mode: leases on running operations, and the reconciler that takes expired ones over.
    { provide: RECOVERY_SETTINGS, useFactory: (options: AgentHooksModuleOptions) => recoverySettings(options), inject: [AGENT_HOOKS_MODULE_OPTIONS] },
    LeaseHolder,
    ToolCallRunner,
    CallRouter,
    Compactor,
    StepCalls,
    TracedModelCalls,
    GovernedModelCalls,
    // K5: the model's deltas to this process's watchers (queue mode binds OPERATION_DELTAS to Redis, below).
    LocalOperationDeltas,
    StepExecutor,
    // Local mode's steps: driven in this process under the lease (queue mode swaps in its own, below).
    LocalStepScheduler,
    // The runtime's jobs: the live operations of this process, the G4 drain of its steps, decision
    // notifications, the terminal sequences, deferred results, starting operations (the steps' host), human
    // decisions, the terminal transition, and the work a dead process owed (what the reconciler takes over).
    LiveOperations,
    StepDrain,
    InterventionNotifier,
    ApprovalEdits,
    TerminalSequence,
    DeferredResults,
    TerminalTransition,
    OperationStart,
    HumanDecisions,
    OwedWork,
    // DESIGN §12: reading operations in the HTTP API's shapes, for the facade and the HTTP API alike.
    ...READING_PROVIDERS,
    // The public facade; sub-agents and the queue use `OperationStart` itself.
    AgentRuntime,
    EngineLifecycle,
    OperationReconciler,
    // Queue mode (idle otherwise): step jobs on BullMQ, workers, the reconciler.
    ...QUEUE_PROVIDERS,
    // G4: the only provider here with shutdown hooks; it stops, drains and closes everything above in order.
    ShutdownCoordinator,
  ],
  exports: [
    HookRegistry,
    HookDispatcher,
    HookReadinessWatcher,
    WebhookDeliveryService,
    AgentRuntime,
    AgentTracer,
    RuntimeDatabase,
    OPERATION_EVENTS,
    OPERATION_READER,
    DATABASE_MAINTENANCE,
    RECOVERY_SETTINGS,
    OperationReadService,
    OperationFollower,
    OperationChanges,
    ...TOOLS_EXPORTS,
  ],
})
export class AgentHooksModule extends AgentHooksConfigurableModule {}
