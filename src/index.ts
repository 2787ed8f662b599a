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
export type { HookOutcome, HookOutcomeRecord } from './hooks/hook-outcome.js';
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
