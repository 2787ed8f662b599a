/**
 * The public API of nest-agent-hooks (DESIGN §6): the documented surface only, pinned by
 * test/unit/public-api.spec.ts. Everything else (explorers, the metadata accessor, stores, the database,
 * internal ports and tokens) stays importable from its own module inside the package, not from here.
 *
 * Ports a host may implement, each an optional Nest provider the package looks up in any module:
 * - `USER_DIRECTORY` / `UserDirectory`: `userId` → `userEmail` in webhook payloads (B3).
 * - `QUEUED_WEBHOOK_DELIVERY` / `QueuedDeliveryPort`: the host's own queue for `delivery: 'queue' | 'qstash'`.
 * Not ports a host implements: the outcome sink (bound to the timeline inside the module; hosts read
 * `dispatcher.outcomes$`), the agent directory and runtime store (bound to config and the database), and
 * the webhook delivery, environment hook and caller hook validator ports between the package's rooms.
 */

// Module and options
export { AgentHooksModule } from './agent-hooks.module.js';
export type {
  AgentHooksModuleOptions,
  AgentHooksQueueOptions,
  AgentHooksWebhookOptions,
  AgentHooksShutdownOptions,
  AgentHooksRecoveryOptions,
  AgentHooksTracingOptions,
} from './agent-hooks.options.js';

// Hook points (SPEC A2, E2, K1)
export { HOOK_POINT_NAMES, AGENT_HOOK_POINTS, ENGINE_HOOK_POINTS, isHookPoint, hookEventName } from './hooks/hook-points.js';
export type { HookPoint, HookPayloads, AgentHookPoint, EngineHookPoint, TransformHookPoint, ToolControlPoint, ModelControlPoint, ControlPoint } from './hooks/hook-points.js';

// Agent-family events and caller hooks
export type * from './hooks/agent-events.js';
export type * from './hooks/model-call-events.js';
export type {
  AgentHook,
  AgentHookAt,
  AgentHookHandler,
  AgentHookWebhook,
  HookDecision,
  FailurePolicy,
  OnErrorPolicy,
  ResponseHandling,
  WebhookDelivery,
} from './hooks/agent-hook.js';

// Engine-family contexts and what a hook method receives
export {
  EngineContext,
  AuthContext,
  RunContext,
  RunEndContext,
  ToolRequestContext,
  ToolCallContext,
  ToolResultContext,
  McpRequestContext,
  McpResponseContext,
} from './hooks/contexts.js';
export type { RunContextInit, RunContextPatch, ToolRequestInit } from './hooks/contexts.js';
export { ModelRequestContext, ModelResponseContext } from './hooks/model-contexts.js';
export type { ModelRequestInit, ModelResponseInit } from './hooks/model-contexts.js';
export { HookInvocation } from './hooks/hook-invocation.js';

// Decorators; the metadata keys let a host build its own decorators on top (as @nestjs/event-emitter does)
export { OnHook, ON_HOOK_METADATA } from './hooks/on-hook.decorator.js';
export type { OnHookOptions, OnHookMetadata, OnHookMethod, OnHookDecorator, HookArgument } from './hooks/on-hook.decorator.js';
export { Tool, TOOL_METADATA } from './runtime/tools/tool.decorator.js';
export type { ToolOptions } from './runtime/tools/tool.decorator.js';
export type { LocalToolContext } from './runtime/tools/local-tool.js';
// SPEC F2, F3: what a tool declares about its effects (`@Tool`, and MCP servers in agents.yaml)
export type { ToolEffects, ToolRetry } from './runtime/tools/tool-effects.js';

// The dispatcher (README "The dispatcher") and the registry for hosts driving their own loop with it
export { HookDispatcher } from './hooks/hook-dispatcher.js';
// `waitUntilReady()`: resolves once every `@OnHook` is bound, rejects on a binding failure (as @nestjs/event-emitter's).
export { HookReadinessWatcher } from './hooks/hook-readiness.watcher.js';
export type { DispatchOptions } from './hooks/hook-dispatcher.js';
export { HookRegistry } from './hooks/hook-registry.js';
export { ofPoint, ofOutcome } from './hooks/hook-pipeline.js';
export type { DispatchedEvent, HookErrorEvent } from './hooks/hook-pipeline.js';
export type { HookOutcome, HookOutcomeRecord, HookTransport } from './hooks/hook-outcome.js';
export type { HookSource } from './hooks/registered-hook.js';
export type { ToolVerdict, ToolCallGate } from './hooks/tool-verdict.js';
export type { ModelCallGate, ModelMockOutcome } from './hooks/model-call-gate.js';

// The runtime
export { AgentRuntime } from './runtime/agent-runtime.js';
export type { ExecAgentInput, OperationResult } from './runtime/agent-runtime.js';
// Reading operations (DESIGN §12): the HTTP API's own shapes (DESIGN §7)
export type {
  OperationView,
  PendingToolView,
  OperationListView,
  OperationListItemView,
  MessageView,
  TimelineItemView,
} from './runtime/reading/operation-views.js';
export type {
  OperationEvent,
  OperationChange,
  OperationListOptions,
  OperationMessagesOptions,
  OperationChangesOptions,
} from './runtime/reading/read-api.types.js';
export type { ClientToolDeclaration } from './runtime/tools/client-tools.js';

// The HTTP API and the console mounted in a host app (DESIGN §12, SPEC G9)
export { AgentHooksHttpModule, AgentHooksHttpModuleError } from './server/mount/agent-hooks-http.module.js';
export type { AgentHooksHttpOptions } from './server/mount/agent-hooks-http.options.js';
export { AGENT_HOOKS_PUBLIC } from './server/console/public-route.js';

// Persistence (DESIGN §5): for host apps running our migrations in their own pipeline
export { AGENT_HOOKS_ENTITIES } from './persistence/agent-hooks-entities.js';
export { AGENT_HOOKS_MIGRATIONS } from './persistence/migrations/agent-hooks-migrations.js';
export { runAgentHooksMigrations } from './persistence/run-migrations.js';

// Ports a host may implement (see above)
export { USER_DIRECTORY } from './webhooks/user-directory.js';
export type { UserDirectory } from './webhooks/user-directory.js';
export { QUEUED_WEBHOOK_DELIVERY } from './webhooks/queued-delivery.port.js';
export type { QueuedDeliveryPort, QueuedWebhook } from './webhooks/queued-delivery.port.js';

// What notification payloads drop (DESIGN §6, B2); a host may apply the same rule to its own copies
export { redactResultForEvents } from './webhooks/payload-builder.js';

// Errors
export { HookFailedError, HookConfigurationError, HookTimeoutError, CriticalHookDeliveryError } from './hooks/hook-errors.js';
export type { CriticalDeliveryFailure } from './hooks/hook-errors.js';
export {
  UnknownAgentError,
  RuntimeNotReadyError,
  RuntimeShuttingDownError,
  RunBlockedError,
  RunLimitError,
  RunCancelledError,
  RunFailedError,
  UnknownOperationError,
  UnknownInterventionError,
  InterventionNotPendingError,
  InvalidEditedArgumentsError,
  AlreadyCompletedError,
  OperationCompletedError,
  SubAgentDepthError,
  IdempotencyKeyReusedError,
  InvalidListQueryError,
} from './runtime/runtime-errors.js';
export { ToolError } from './runtime/tools/tool-types.js';
export { InvalidClientToolsError } from './runtime/tools/client-tools.js';
export { ModelError } from './runtime/models/chat-model.js';
export type {
  ChatModel,
  ChatRequest,
  ChatResponse,
  ChatCallOptions,
  ChatMessage,
  ChatUsage,
  ChatFinishReason,
  ModelToolCall,
  ModelToolSpec,
  ModelErrorDetails,
} from './runtime/models/chat-model.js';
// Any AI SDK provider as a ChatModel (DESIGN §12): structural types only, nothing of the SDK is loaded
export { aiSdkChatModel } from './runtime/models/ai-sdk-chat-model.js';
export type { AiSdkChatModelOptions, AiSdkCallSettings } from './runtime/models/ai-sdk-chat-model.js';
export type { AiSdkLanguageModel } from './runtime/models/ai-sdk-language-model.js';
export { AgentsConfigError } from './config/config-error.js';
export { EnvironmentSettingError } from './common/environment-setting-error.js';
export type { SettingProblem } from './common/environment-setting-error.js';
export { DatabaseConfigError } from './persistence/persistence-errors.js';
export { WebhookError } from './webhooks/webhook-error.js';
export type { WebhookErrorCode } from './webhooks/webhook-error.js';
