/** The public API of nest-agent-hooks. Explicit exports only. */
export { AgentHooksModule } from './agent-hooks.module.js';
export { AGENT_HOOKS_MODULE_OPTIONS } from './agent-hooks.module-definition.js';
export type { AgentHooksModuleOptions, AgentHooksWebhookOptions } from './agent-hooks.options.js';

export {
  HOOK_POINTS,
  HOOK_POINT_NAMES,
  AGENT_HOOK_POINTS,
  ENGINE_HOOK_POINTS,
  isHookPoint,
  hookPointSpec,
  hookEventName,
} from './hooks/hook-points.js';
export type {
  HookPoint,
  HookFamily,
  HookKind,
  HookPointSpec,
  HookPayloads,
  AgentHookPoint,
  EngineHookPoint,
  TransformHookPoint,
  ToolControlPoint,
} from './hooks/hook-points.js';
export type * from './hooks/agent-events.js';
export type {
  AgentHook,
  AgentHookHandler,
  AgentHookWebhook,
  HookDecision,
  FailurePolicy,
  OnErrorPolicy,
  ResponseHandling,
  WebhookDelivery,
} from './hooks/agent-hook.js';

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
export { CONTEXT_BRAND, hasBrand } from './hooks/context-brand.js';
export { HookInvocation } from './hooks/hook-invocation.js';

export { OnHook, ON_HOOK_METADATA } from './hooks/on-hook.decorator.js';
export type { OnHookOptions, OnHookMetadata } from './hooks/on-hook.decorator.js';
export { HookMetadataAccessor } from './hooks/hook-metadata.accessor.js';
export { HookExplorer } from './hooks/hook-explorer.js';
export { HookReadinessWatcher } from './hooks/hook-readiness.watcher.js';
export { HookRegistry } from './hooks/hook-registry.js';
export { HookDispatcher } from './hooks/hook-dispatcher.js';
export type { DispatchOptions } from './hooks/hook-dispatcher.js';
export { ofPoint, ofOutcome } from './hooks/hook-pipeline.js';
export type { DispatchedEvent, HookErrorEvent } from './hooks/hook-pipeline.js';
export type { HookOutcome, HookOutcomeRecord, HookTransport } from './hooks/hook-outcome.js';
export type { HookSource, RegisteredHook } from './hooks/registered-hook.js';
export { ALLOWED, HOOK_CONTROL_ERROR } from './hooks/tool-verdict.js';
export type { ToolVerdict, ToolCallGate } from './hooks/tool-verdict.js';
export { readDecision, defaultDenyReason } from './hooks/decision.js';
export type { DecisionReading } from './hooks/decision.js';
export { compileMatcher } from './hooks/matcher.js';
export type { ToolMatcher } from './hooks/matcher.js';

export {
  WEBHOOK_DELIVERY,
  ENVIRONMENT_HOOK_SOURCE,
  HOOK_OUTCOME_SINK,
  CALLER_HOOK_VALIDATOR,
} from './hooks/hook-ports.js';
export type {
  WebhookDeliveryPort,
  WebhookRequest,
  EnvironmentHookSource,
  HookOutcomeSink,
  CallerHookValidator,
} from './hooks/hook-ports.js';

export {
  HookFailedError,
  HookConfigurationError,
  HookTimeoutError,
  CriticalHookDeliveryError,
} from './hooks/hook-errors.js';
export type { CriticalDeliveryFailure } from './hooks/hook-errors.js';

// Runtime (DESIGN §6)
export { AgentRuntime, restoredContext } from './runtime/agent-runtime.js';
export type { ExecAgentInput, OperationResult } from './runtime/agent-runtime.js';
export {
  UnknownAgentError,
  RunLimitError,
  RunCancelledError,
  RunFailedError,
  UnknownOperationError,
  UnknownInterventionError,
  InterventionNotPendingError,
  AlreadyCompletedError,
  OperationCompletedError,
  SubAgentDepthError,
} from './runtime/runtime-errors.js';
export { Tool, TOOL_METADATA } from './runtime/tools/tool.decorator.js';
export type { ToolOptions } from './runtime/tools/tool.decorator.js';
export type { LocalToolContext } from './runtime/tools/local-tool.js';
export { ToolError, TOOL_CATALOG } from './runtime/tools/tool-types.js';
export type { ToolCatalog, ToolDefinition, ToolInvocation, ToolOffer } from './runtime/tools/tool-types.js';
export { MCP_SERVERS, TOOLS_OPTIONS, CLIENT_TOOLS } from './runtime/tools/tools.options.js';
export type { McpServersConfig, ToolsOptions, ClientToolsConfig } from './runtime/tools/tools.options.js';
export { InvalidClientToolsError, CLIENT_TOOL_LIMITS } from './runtime/tools/client-tools.js';
export type { ClientToolDeclaration } from './runtime/tools/client-tools.js';
export { TOOL_NOT_AVAILABLE } from './runtime/tools/unavailable-tool.js';
export { buildToolCallHookContext } from './runtime/tools/tool-context.builder.js';
export { ModelError } from './runtime/models/chat-model.js';
export type { ChatModel, ChatMessage, ChatRequest, ChatResponse, ChatUsage, ModelToolCall, ModelToolSpec } from './runtime/models/chat-model.js';
export { ScriptedChatModel } from './runtime/models/scripted-chat-model.js';
export { OpenAiChatModel } from './runtime/models/openai-chat-model.js';
export { createChatModel } from './runtime/models/create-chat-model.js';
export { AGENT_DIRECTORY } from './runtime/agent-directory.port.js';
export type { AgentDirectory, ResolvedAgent, AgentLimits } from './runtime/agent-directory.port.js';
export { RUNTIME_STORE } from './runtime/runtime-store.port.js';
export type { RuntimeStore, StoredOperation, StoredMessage, StoredCallerHook, StoredRunContext } from './runtime/runtime-store.port.js';

// Config (DESIGN §8)
export { loadAgentsConfig, loadAgentsConfigSync, parseAgentsConfig } from './config/agents-config.loader.js';
export type { AgentsConfig } from './config/agents-config.js';
export { AgentsConfigError } from './config/config-error.js';
export { EnvironmentSettingError } from './config/environment/environment-setting-error.js';
export type { SettingProblem } from './config/environment/environment-setting-error.js';

// Persistence (DESIGN §5): for host apps running our migrations in their own pipeline
export { AGENT_HOOKS_ENTITIES } from './persistence/agent-hooks-entities.js';
export { AGENT_HOOKS_MIGRATIONS } from './persistence/migrations/agent-hooks-migrations.js';
export { runAgentHooksMigrations } from './persistence/run-migrations.js';
export { createDataSourceOptions } from './persistence/data-source-options.js';
export { RuntimeDatabase } from './persistence/runtime-database.js';
export { DatabaseConfigError } from './persistence/persistence-errors.js';

// Webhooks
export { WebhookDeliveryService } from './webhooks/webhook-delivery.service.js';
export { WebhookError } from './webhooks/webhook-error.js';
export type { WebhookErrorCode } from './webhooks/webhook-error.js';
export { USER_DIRECTORY } from './webhooks/user-directory.js';
export type { UserDirectory } from './webhooks/user-directory.js';
export { QUEUED_WEBHOOK_DELIVERY } from './webhooks/queued-delivery.port.js';
export type { QueuedDeliveryPort, QueuedWebhook } from './webhooks/queued-delivery.port.js';
export { redactResultForEvents } from './webhooks/payload-builder.js';
