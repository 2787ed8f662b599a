/**
 * A model call as a `chat <model>` span (SPEC O1, GenAI semantic conventions): the request model, the
 * token usage and the finish reason; an error is its `error.type` only (S3). The messages go on the span
 * only when the operator opted in to content capture (O4).
 */
import { Injectable } from '@nestjs/common';
import type { ResolvedAgent } from './agent-directory.port.js';
import type { ChatRequest, ChatResponse } from './models/chat-model.js';
import { AgentTracer } from '../tracing/agent-tracer.js';
import { GEN_AI, OURS } from '../tracing/gen-ai-attributes.js';

@Injectable()
export class TracedModelCalls {
  constructor(private readonly tracer: AgentTracer) {}

  complete(agent: ResolvedAgent, request: ChatRequest, operationId: string): Promise<ChatResponse> {
    const model = agent.modelInfo?.name ?? 'unknown';
    // Built only when a span is started (an SDK is registered).
    const attributes = () => ({
      [GEN_AI.operationName]: 'chat',
      [GEN_AI.requestModel]: model,
      [GEN_AI.agentName]: agent.id,
      [GEN_AI.conversationId]: operationId,
      [OURS.operationId]: operationId,
      ...(agent.modelInfo ? { [GEN_AI.providerName]: agent.modelInfo.provider } : {}),
    });
    return this.tracer.span(`chat ${model}`, 'client', attributes, async (span) => {
      const response = await agent.model.complete(request);
      if (span.recording) {
        span.set({
          [GEN_AI.inputTokens]: response.usage.inputTokens,
          [GEN_AI.outputTokens]: response.usage.outputTokens,
          [GEN_AI.finishReasons]: [response.toolCalls.length > 0 ? 'tool_calls' : 'stop'],
          ...(this.tracer.captureContent
            ? { [GEN_AI.inputMessages]: JSON.stringify(request.messages), [GEN_AI.outputMessages]: JSON.stringify([{ role: 'assistant', content: response.content, toolCalls: response.toolCalls }]) }
            : {}),
        });
      }
      return response;
    });
  }
}
