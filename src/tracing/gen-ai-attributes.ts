/**
 * Attribute names of the OpenTelemetry GenAI semantic conventions (SPEC O1), and ours beside them under
 * `nest_agent_hooks.*`. Values are identifiers, counts and outcomes — never content (O4).
 */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  agentName: 'gen_ai.agent.name',
  agentId: 'gen_ai.agent.id',
  conversationId: 'gen_ai.conversation.id',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  finishReasons: 'gen_ai.response.finish_reasons',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
} as const;

export const OURS = {
  operationId: 'nest_agent_hooks.operation.id',
  toolOutcome: 'nest_agent_hooks.tool.outcome',
  /** F1: the call's idempotency key (an opaque hash, never content). */
  toolIdempotencyKey: 'nest_agent_hooks.tool.idempotency_key',
  hookPoint: 'nest_agent_hooks.hook.point',
  hookId: 'nest_agent_hooks.hook.id',
  hookSource: 'nest_agent_hooks.hook.source',
  hookOutcome: 'nest_agent_hooks.hook.outcome',
  hookErrorCode: 'nest_agent_hooks.hook.error_code',
  hookTransport: 'nest_agent_hooks.hook.transport',
  reason: 'nest_agent_hooks.operation.reason',
  /** K4: which attempt of its model a `chat` span is, from 1. */
  modelAttempt: 'nest_agent_hooks.model.attempt',
  /** An `invoke_agent` span of a step that ran after the operation's first span (another process, later). */
  resumed: 'nest_agent_hooks.operation.resumed',
} as const;

export const ERROR_TYPE = 'error.type';
