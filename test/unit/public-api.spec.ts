/**
 * DESIGN §6: `src/index.ts` exports the documented surface only. This pins it: a new export (or a lost
 * one) is a decision to make here, not a side effect. Values are checked at run time, types at compile
 * time (`npm run typecheck` covers test/; each `@ts-expect-error` line is an internal that must stay out).
 */
import { expectTypeOf } from 'expect-type';
import * as api from '../../src/index.js';
import type * as Api from '../../src/index.js';

const VALUES = {
  module: ['AgentHooksModule'],
  hookPoints: ['HOOK_POINT_NAMES', 'AGENT_HOOK_POINTS', 'ENGINE_HOOK_POINTS', 'isHookPoint', 'hookEventName'],
  contexts: [
    'EngineContext',
    'AuthContext',
    'RunContext',
    'RunEndContext',
    'ToolRequestContext',
    'ToolCallContext',
    'ToolResultContext',
    'McpRequestContext',
    'McpResponseContext',
    'ModelRequestContext',
    'ModelResponseContext',
    'HookInvocation',
  ],
  decorators: ['OnHook', 'ON_HOOK_METADATA', 'Tool', 'TOOL_METADATA'],
  dispatcher: ['HookDispatcher', 'HookRegistry', 'HookReadinessWatcher', 'ofPoint', 'ofOutcome'],
  runtime: ['AgentRuntime'],
  http: ['AgentHooksHttpModule', 'AGENT_HOOKS_PUBLIC'],
  persistence: ['AGENT_HOOKS_ENTITIES', 'AGENT_HOOKS_MIGRATIONS', 'runAgentHooksMigrations'],
  hostPorts: ['USER_DIRECTORY', 'QUEUED_WEBHOOK_DELIVERY'],
  payloads: ['redactResultForEvents'],
  models: ['aiSdkChatModel'],
  errors: [
    'HookFailedError',
    'HookConfigurationError',
    'HookTimeoutError',
    'CriticalHookDeliveryError',
    'UnknownAgentError',
    'RuntimeNotReadyError',
    'RuntimeShuttingDownError',
    'RunBlockedError',
    'RunLimitError',
    'RunCancelledError',
    'RunFailedError',
    'UnknownOperationError',
    'UnknownInterventionError',
    'InterventionNotPendingError',
    'InvalidEditedArgumentsError',
    'AlreadyCompletedError',
    'OperationCompletedError',
    'SubAgentDepthError',
    'IdempotencyKeyReusedError',
    'InvalidListQueryError',
    'ToolError',
    'InvalidClientToolsError',
    'ModelError',
    'AgentsConfigError',
    'EnvironmentSettingError',
    'DatabaseConfigError',
    'WebhookError',
    'AgentHooksHttpModuleError',
  ],
};

/** Key type exports: compiling this is the check. */
export type PublicTypes = [
  Api.AgentHooksModuleOptions,
  Api.AgentHooksWebhookOptions,
  Api.AgentHooksQueueOptions,
  Api.AgentHooksHttpOptions,
  Api.HookPoint,
  Api.AgentHookPoint,
  Api.EngineHookPoint,
  Api.ToolControlPoint,
  Api.ModelControlPoint,
  Api.ControlPoint,
  Api.HookPayloads,
  Api.AgentHook,
  Api.AgentHookAt<'afterToolCall'>,
  Api.AgentHookHandler<'afterToolCall'>,
  Api.AgentHookWebhook,
  Api.HookDecision,
  Api.AgentEventBase,
  Api.BeforeToolCallEvent,
  Api.AfterToolCallEvent,
  Api.BeforeModelCallEvent,
  Api.AfterModelCallEvent,
  Api.OnModelCallErrorEvent,
  Api.ModelCallMock,
  Api.ModelCallGate,
  Api.OnCompleteEvent,
  Api.ReachedLimit,
  Api.LimitName,
  Api.ToolResult,
  Api.RunContextInit,
  Api.OnHookOptions,
  Api.OnHookMetadata,
  Api.HookArgument<'afterToolCall'>,
  Api.ToolOptions,
  Api.LocalToolContext,
  Api.ToolEffects,
  Api.ToolRetry,
  Api.DispatchOptions,
  Api.DispatchedEvent,
  Api.HookErrorEvent,
  Api.HookOutcomeRecord,
  Api.ToolVerdict,
  Api.ExecAgentInput,
  Api.OperationResult,
  Api.ClientToolDeclaration,
  Api.OperationView,
  Api.PendingToolView,
  Api.OperationListView,
  Api.OperationListItemView,
  Api.MessageView,
  Api.TimelineItemView,
  Api.OperationEvent,
  Api.OperationChange,
  Api.OperationListOptions,
  Api.OperationMessagesOptions,
  Api.OperationChangesOptions,
  Api.UserDirectory,
  Api.QueuedDeliveryPort,
  Api.QueuedWebhook,
  Api.CriticalDeliveryFailure,
  Api.WebhookErrorCode,
  Api.ChatModel,
  Api.ChatRequest,
  Api.ChatResponse,
  Api.ChatCallOptions,
  Api.ChatMessage,
  Api.ChatUsage,
  Api.ChatFinishReason,
  Api.ModelToolCall,
  Api.ModelToolSpec,
  Api.ModelErrorDetails,
  Api.AiSdkLanguageModel,
  Api.AiSdkChatModelOptions,
  Api.AiSdkCallSettings,
];

/** Internals that must not be importable from the package root. */
export type InternalTypes = [
  // @ts-expect-error the runtime's store port is internal
  Api.RuntimeStore,
  // @ts-expect-error the agent directory is bound to config inside the module
  Api.AgentDirectory,
  // @ts-expect-error the outcome sink is bound to the timeline inside the module; hosts read outcomes$
  Api.HookOutcomeSink,
  // @ts-expect-error the dispatcher's normalized hook view is internal
  Api.RegisteredHook,
  // @ts-expect-error the port between the hooks and webhooks rooms is internal
  Api.WebhookDeliveryPort,
];

describe('DESIGN §6 the public surface', () => {
  it('DESIGN §12 read API: the shapes are the HTTP API\'s (DESIGN §7), and events leave room for deltas (SPEC K5)', () => {
    expectTypeOf<Api.OperationView['status']>().toEqualTypeOf<'running' | 'waiting' | 'completed'>();
    expectTypeOf<Api.OperationListView>().toEqualTypeOf<{ items: Api.OperationListItemView[]; nextCursor?: string }>();
    expectTypeOf<ReturnType<Api.AgentRuntime['get']>>().toEqualTypeOf<Promise<Api.OperationView | null>>();
    expectTypeOf<ReturnType<Api.AgentRuntime['list']>>().toEqualTypeOf<Promise<Api.OperationListView>>();
    expectTypeOf<ReturnType<Api.AgentRuntime['messages']>>().toEqualTypeOf<Promise<Api.MessageView[]>>();
    expectTypeOf<ReturnType<Api.AgentRuntime['timeline']>>().toEqualTypeOf<Promise<Api.TimelineItemView[]>>();
    expectTypeOf<Api.OperationEvent['type']>().toEqualTypeOf<'status' | 'message' | 'delta'>();
    expectTypeOf<Extract<Api.OperationEvent, { type: 'delta' }>>().toEqualTypeOf<{ type: 'delta'; stepIndex: number; text: string }>();
    expectTypeOf<Api.OperationChange['type']>().toEqualTypeOf<'operation' | 'resync'>();
    expectTypeOf<Api.OperationListOptions>().toEqualTypeOf<{ ownerId?: string; status?: 'running' | 'waiting' | 'completed'; agentId?: string; limit?: number; cursor?: string }>();
  });

  it('DESIGN §12: the ChatModel port is exported: complete(request, { signal, onDelta }) resolving with { content, toolCalls, finishReason, usage }', () => {
    expectTypeOf<Api.ChatModel['complete']>().parameters.toEqualTypeOf<[Api.ChatRequest, Api.ChatCallOptions?]>();
    expectTypeOf<ReturnType<Api.ChatModel['complete']>>().toEqualTypeOf<Promise<Api.ChatResponse>>();
    expectTypeOf<Api.ChatCallOptions>().toEqualTypeOf<{ signal?: AbortSignal; onDelta?: (text: string) => void }>();
    expectTypeOf<keyof Api.ChatResponse>().toEqualTypeOf<'content' | 'toolCalls' | 'finishReason' | 'usage'>();
    expectTypeOf<Api.ChatUsage>().toEqualTypeOf<{ inputTokens: number; outputTokens: number; costUsd: number }>();
    expectTypeOf<Api.ChatMessage['role']>().toEqualTypeOf<'system' | 'user' | 'assistant' | 'tool'>();
    expectTypeOf<NonNullable<Api.AgentHooksModuleOptions['models']>>().toEqualTypeOf<Record<string, Api.ChatModel>>();
    expect(typeof api.ModelError).toBe('function');
  });

  it('DESIGN §12: the AI SDK adapter is exported from the root: aiSdkChatModel(model, options?) gives a ChatModel', () => {
    expectTypeOf(api.aiSdkChatModel).parameters.toEqualTypeOf<[Api.AiSdkLanguageModel, Api.AiSdkChatModelOptions?]>();
    expectTypeOf(api.aiSdkChatModel).returns.toEqualTypeOf<Api.ChatModel>();
    expect(typeof api.aiSdkChatModel).toBe('function');
  });

  it('exports exactly the documented values', () => {
    expect(Object.keys(api).sort()).toEqual(Object.values(VALUES).flat().sort());
  });

  it('keeps internals out: explorers, the metadata accessor, stores, the database, the context brand', () => {
    for (const name of ['HookExplorer', 'HookMetadataAccessor', 'RuntimeDatabase', 'CONTEXT_BRAND', 'hasBrand', 'RUNTIME_STORE', 'AGENT_DIRECTORY', 'HOOK_OUTCOME_SINK', 'WEBHOOK_DELIVERY', 'OperationRunner', 'OperationStart', 'HumanDecisions', 'TerminalTransition', 'CallGate', 'HookInvoker', 'OutcomeRecorder', 'restoredContext']) {
      expect(Object.keys(api)).not.toContain(name);
    }
  });

  it('AgentRuntime shows a host execAgent, run, cancel, approve, reject, completeDeferred, result and the read API (DESIGN §12) only', () => {
    const methods = ['execAgent', 'run', 'cancel', 'approve', 'reject', 'completeDeferred', 'result', 'get', 'list', 'messages', 'timeline', 'events', 'changes'] as const;
    expectTypeOf<keyof Api.AgentRuntime>().toEqualTypeOf<(typeof methods)[number]>();
    expect(Object.getOwnPropertyNames(api.AgentRuntime.prototype).filter((name) => name !== 'constructor').sort()).toEqual([...methods].sort());
  });
});
