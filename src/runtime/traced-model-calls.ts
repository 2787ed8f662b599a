/**
 * A model call as `chat <model>` spans (SPEC O1, GenAI semantic conventions), one per attempt (K4): the
 * request model, the token usage and the finish reason; a failed attempt is its `error.type` and HTTP
 * status only (S3). The messages go on the span only when the operator opted in to content capture (O4).
 * Retries and fallbacks are `completeWithAttempts`'s (models/model-attempts.ts).
 */
import { Injectable } from '@nestjs/common';
import type { ResolvedAgent } from './agent-directory.port.js';
import { ModelError, type ChatCallOptions, type ChatRequest, type ChatResponse } from './models/chat-model.js';
import { completeWithAttempts, type ModelAttemptObserver, type ModelCandidate } from './models/model-attempts.js';
import { DEFAULT_MODEL_RETRY } from './models/model-retry-policy.js';
import type { CallDeltas } from './streaming/call-deltas.js';
import { AgentTracer, type SpanAttributes, type TraceSpan } from '../tracing/agent-tracer.js';
import { GEN_AI, OURS } from '../tracing/gen-ai-attributes.js';

@Injectable()
export class TracedModelCalls {
  /** The agent's models in the order K4 tries them, built once per resolved agent. */
  private readonly chains = new WeakMap<ResolvedAgent, readonly ModelCandidate[]>();

  constructor(private readonly tracer: AgentTracer) {}

  /** `deltas`: the call streams (K5); each attempt writes through its own `onDelta`. */
  complete(agent: ResolvedAgent, request: ChatRequest, operationId: string, observer?: ModelAttemptObserver, deltas?: CallDeltas): Promise<ChatResponse> {
    return completeWithAttempts(this.chainOf(agent), request, (candidate, attemptRequest, attempt) => this.attempt(agent, candidate, attemptRequest, attempt, operationId, deltas), observer ? { observer } : {});
  }

  private attempt(agent: ResolvedAgent, candidate: ModelCandidate, request: ChatRequest, attempt: number, operationId: string, deltas: CallDeltas | undefined): Promise<ChatResponse> {
    // Built only when a span is started (an SDK is registered).
    const attributes = (): SpanAttributes => {
      const built: SpanAttributes = { [GEN_AI.operationName]: 'chat', [GEN_AI.requestModel]: candidate.name, [GEN_AI.agentName]: agent.id, [GEN_AI.conversationId]: operationId, [OURS.operationId]: operationId, [OURS.modelAttempt]: attempt };
      if (candidate.provider !== undefined) built[GEN_AI.providerName] = candidate.provider;
      return built;
    };
    // No async frame around the call (each promise costs while a context manager is active).
    return this.tracer.span(`chat ${candidate.name}`, 'client', attributes, (span) => {
      // DESIGN §12: the signal in the options, and in the request for providers that read it there.
      const options: ChatCallOptions = request.signal ? { signal: request.signal } : {};
      const onDelta = deltas?.attempt();
      if (onDelta) options.onDelta = onDelta;
      const answered = candidate.model.complete(request, options);
      if (deltas && onDelta) {
        // K5: a failed or timed-out attempt stops counting at once (a provider may ignore its signal).
        request.signal?.addEventListener('abort', () => deltas.retire(onDelta), { once: true });
        answered.catch(() => deltas.retire(onDelta));
      }
      return span.recording ? answered.then((response) => this.usageOn(span, request, response), (error: unknown) => this.failureOn(span, error)) : answered;
    });
  }

  private chainOf(agent: ResolvedAgent): readonly ModelCandidate[] {
    let chain = this.chains.get(agent);
    if (!chain) {
      const own: ModelCandidate = {
        name: agent.modelInfo?.name ?? 'unknown',
        ...(agent.modelInfo ? { provider: agent.modelInfo.provider } : {}),
        model: agent.model,
        retry: agent.modelSettings?.retry ?? DEFAULT_MODEL_RETRY,
        ...(agent.modelSettings?.timeoutMs !== undefined ? { timeoutMs: agent.modelSettings.timeoutMs } : {}),
      };
      const fallbacks = (agent.fallback ?? []).map(({ name, provider, model, retry, timeoutMs }) => ({ name, provider, model, retry: retry ?? DEFAULT_MODEL_RETRY, ...(timeoutMs !== undefined ? { timeoutMs } : {}) }));
      chain = [own, ...fallbacks];
      this.chains.set(agent, chain);
    }
    return chain;
  }

  /** The usage and finish reason on the span, known once the model answered (and the messages, when captured). */
  private usageOn(span: TraceSpan, request: ChatRequest, response: ChatResponse): ChatResponse {
    const attributes: SpanAttributes = {
      [GEN_AI.inputTokens]: response.usage.inputTokens,
      [GEN_AI.outputTokens]: response.usage.outputTokens,
      [GEN_AI.finishReasons]: [response.finishReason ?? (response.toolCalls.length > 0 ? 'tool_calls' : 'stop')],
    };
    if (this.tracer.captureContent) {
      attributes[GEN_AI.inputMessages] = JSON.stringify(request.messages);
      attributes[GEN_AI.outputMessages] = JSON.stringify([{ role: 'assistant', content: response.content, toolCalls: response.toolCalls }]);
    }
    span.set(attributes);
    return response;
  }

  /** A failed attempt's HTTP status and reported usage on its span (the tracer adds `error.type`); never its message. */
  private failureOn(span: TraceSpan, error: unknown): never {
    if (error instanceof ModelError) {
      const attributes: SpanAttributes = {};
      if (error.status !== undefined) attributes[HTTP_STATUS] = error.status;
      if (error.usage) {
        attributes[GEN_AI.inputTokens] = error.usage.inputTokens;
        attributes[GEN_AI.outputTokens] = error.usage.outputTokens;
      }
      span.set(attributes);
    }
    throw error;
  }
}

/** OpenTelemetry's HTTP semantic convention for the answer's status. */
const HTTP_STATUS = 'http.response.status_code';
