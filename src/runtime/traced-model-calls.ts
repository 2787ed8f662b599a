/**
 * A model call as a `chat <model>` span (SPEC O1, GenAI semantic conventions): the request model, the
 * token usage and the finish reason; an error is its `error.type` only (S3). The messages go on the span
 * only when the operator opted in to content capture (O4).
 */
import { Injectable } from '@nestjs/common';
import type { ResolvedAgent } from './agent-directory.port.js';
import { ModelError, type ChatRequest, type ChatResponse } from './models/chat-model.js';
import type { ModelAttemptObserver } from './models/model-attempts.js';
import { AgentTracer, type SpanAttributes, type TraceSpan } from '../tracing/agent-tracer.js';
import { GEN_AI, OURS } from '../tracing/gen-ai-attributes.js';

@Injectable()
export class TracedModelCalls {
  constructor(private readonly tracer: AgentTracer) {}

  /** `observer` hears each failed attempt (K2: `onModelCallError`); the call is one attempt. */
  complete(agent: ResolvedAgent, request: ChatRequest, operationId: string, observer?: ModelAttemptObserver): Promise<ChatResponse> {
    const model = agent.modelInfo?.name ?? 'unknown';
    // Built only when a span is started (an SDK is registered).
    const attributes = (): SpanAttributes => {
      const built: SpanAttributes = { [GEN_AI.operationName]: 'chat', [GEN_AI.requestModel]: model, [GEN_AI.agentName]: agent.id, [GEN_AI.conversationId]: operationId, [OURS.operationId]: operationId };
      if (agent.modelInfo) built[GEN_AI.providerName] = agent.modelInfo.provider;
      return built;
    };
    // No async frame around the call (each promise costs while a context manager is active).
    return this.tracer.span(`chat ${model}`, 'client', attributes, (span) => {
      const called = agent.model.complete(request);
      const answered = observer ? called.catch((error: unknown) => failedAttempt(observer, model, error)) : called;
      return span.recording ? answered.then((response) => this.usageOn(span, request, response)) : answered;
    });
  }

  /** The usage and finish reason on the span, known once the model answered (and the messages, when captured). */
  private usageOn(span: TraceSpan, request: ChatRequest, response: ChatResponse): ChatResponse {
    const attributes: SpanAttributes = {
      [GEN_AI.inputTokens]: response.usage.inputTokens,
      [GEN_AI.outputTokens]: response.usage.outputTokens,
      [GEN_AI.finishReasons]: [response.toolCalls.length > 0 ? 'tool_calls' : 'stop'],
    };
    if (this.tracer.captureContent) {
      attributes[GEN_AI.inputMessages] = JSON.stringify(request.messages);
      attributes[GEN_AI.outputMessages] = JSON.stringify([{ role: 'assistant', content: response.content, toolCalls: response.toolCalls }]);
    }
    span.set(attributes);
    return response;
  }
}

/** Tells the observer, then fails as the attempt did (the caller sees the original error). */
function failedAttempt(observer: ModelAttemptObserver, model: string, error: unknown): never {
  const type = error instanceof ModelError ? error.code : error instanceof Error ? error.name : typeof error;
  const status = error instanceof ModelError ? error.status : undefined;
  observer.attemptFailed({ model, attempt: 1, error: { type, ...(status !== undefined ? { status } : {}) }, willRetry: false });
  throw error;
}
