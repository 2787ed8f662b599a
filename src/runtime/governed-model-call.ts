/**
 * Every model call the runtime makes — a step's answer, a compaction summary — governed by the model-call
 * points in SPEC K1's order: `before_model_request` transforms → `beforeModelCall` mock phase → its controls →
 * the call (each failed attempt an `onModelCallError`) → `after_model_response` transforms →
 * `afterModelCall` controls. A deny on either side is a `ModelCallBlocked` (K3). With none of the five
 * points observed the call is the plain traced call, nothing built and nothing dispatched (K6, E3).
 */
import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { AgentEventBase } from '../hooks/agent-events.js';
import { HookDispatcher, type DispatchOptions } from '../hooks/hook-dispatcher.js';
import type { ModelCallPurpose } from '../hooks/model-call-events.js';
import type { ModelMockOutcome } from '../hooks/model-call-gate.js';
import { ModelRequestContext, ModelResponseContext } from '../hooks/model-contexts.js';
import type { DeniedVerdict } from '../hooks/tool-verdict.js';
import type { ResolvedAgent } from './agent-directory.port.js';
import type { ChatRequest, ChatResponse, ChatUsage } from './models/chat-model.js';
import type { ModelAttemptFailure } from './models/model-attempts.js';
import { hookMessages, hookResponse, toolNameOf, transformedRequest } from './model-call-messages.js';
import type { CallDeltas } from './streaming/call-deltas.js';
import { TracedModelCalls } from './traced-model-calls.js';

export interface GovernedCall {
  agent: ResolvedAgent;
  request: ChatRequest;
  operationId: string;
  purpose: ModelCallPurpose;
  /** The common fields of the call's agent-family events. */
  base: () => Omit<AgentEventBase, 'type'>;
  dispatchOptions: DispatchOptions;
  /**
   * K5: where the call's text goes as it is written. Streamed live only while no output guard applies
   * (`after_model_response`, `afterModelCall`); else held — the caller sends the decided content after.
   */
  deltas?: CallDeltas;
}

/** The model's answer for the call; `mocked`: a `beforeModelCall` mock gave it (K3), costing nothing. */
export interface GovernedAnswer {
  response: ChatResponse;
  mocked: boolean;
}

const NO_USAGE: ChatUsage = Object.freeze({ inputTokens: 0, outputTokens: 0, costUsd: 0 });

/** A model-call control denied (K3): the operation completes `blocked` with the verdict's reason as its answer. */
export class ModelCallBlocked extends Error {
  override readonly name = 'ModelCallBlocked';
  readonly code = 'blocked';

  /** `usage`: what the call cost before it was denied (nothing when denied before the call). */
  constructor(
    readonly verdict: DeniedVerdict,
    readonly usage: ChatUsage,
  ) {
    super(`model call denied at ${verdict.phase}`);
  }
}

@Injectable()
export class GovernedModelCalls {
  constructor(
    private readonly dispatcher: HookDispatcher,
    private readonly modelCalls: TracedModelCalls,
  ) {}

  /** The answer, or a `ModelCallBlocked` rejection when a control denied. */
  async complete(call: GovernedCall): Promise<GovernedAnswer> {
    const { agent, operationId, dispatchOptions: options } = call;
    const observed = {
      request: this.dispatcher.isObserved('before_model_request', options),
      before: this.dispatcher.isObserved('beforeModelCall', options),
      error: this.dispatcher.isObserved('onModelCallError', options),
      response: this.dispatcher.isObserved('after_model_response', options),
      after: this.dispatcher.isObserved('afterModelCall', options),
    };
    if (!observed.request && !observed.before && !observed.error && !observed.response && !observed.after) {
      return { response: await this.modelCalls.complete(agent, call.request, operationId, undefined, call.deltas), mocked: false };
    }
    // K5: nothing a hook may still change is streamed. Only a hook can change the answer: a subscriber or
    // event listener of these points observes it and does not hold the stream.
    const guarded = this.dispatcher.appliesHooks('after_model_response', options) || this.dispatcher.appliesHooks('afterModelCall', options);
    const live = guarded ? undefined : call.deltas;
    const model = agent.modelInfo?.name ?? 'unknown';
    const offered = call.request.tools.map(toolNameOf);
    let request = call.request;
    let messages = hookMessages(request.messages);
    let toolNames = offered;
    if (observed.request) {
      const context = new ModelRequestContext({ runId: operationId, agentId: agent.id, model, purpose: call.purpose, messages, toolNames });
      const transformed = await this.dispatcher.transform('before_model_request', context, options);
      if (transformed !== context) {
        request = transformedRequest(request, transformed.messages, transformed.toolNames);
        messages = [...transformed.messages];
        toolNames = [...transformed.toolNames];
      }
    }
    const modelEvent = { model, purpose: call.purpose, messages, toolNames };
    let mock: ModelMockOutcome | null = null;
    if (observed.before) {
      const gate = await this.dispatcher.gateModelCall({ ...call.base(), type: 'beforeModelCall', ...modelEvent }, options);
      if (gate.verdict.outcome !== 'allowed') throw new ModelCallBlocked(gate.verdict, NO_USAGE);
      mock = gate.mock;
    }
    let response = mock ? mockedResponse(mock) : await this.called(call, request, model, observed.error, live);
    if (observed.response) response = await this.transformedResponse(call, model, response);
    if (observed.after) {
      const event = { ...call.base(), type: 'afterModelCall' as const, ...modelEvent, response: hookResponse(response), mocked: mock !== null };
      const verdict = await this.dispatcher.gateModelResponse(event, options);
      if (verdict.outcome !== 'allowed') throw new ModelCallBlocked(verdict, response.usage);
    }
    return { response, mocked: mock !== null };
  }

  /** The call itself; each failed attempt is an `onModelCallError`, delivered before the failure goes on (K2). */
  private async called(call: GovernedCall, request: ChatRequest, model: string, observeErrors: boolean, deltas: CallDeltas | undefined): Promise<ChatResponse> {
    if (!observeErrors) return this.modelCalls.complete(call.agent, request, call.operationId, undefined, deltas);
    const reports: Promise<void>[] = [];
    const observer = {
      attemptFailed: (failure: ModelAttemptFailure) => {
        const event = {
          ...call.base(),
          type: 'onModelCallError' as const,
          model: failure.model || model,
          purpose: call.purpose,
          error: { type: failure.error.type, ...(failure.error.status !== undefined ? { status: failure.error.status } : {}) },
          attempt: failure.attempt,
          willRetry: failure.willRetry,
          ...(failure.nextModel !== undefined ? { nextModel: failure.nextModel } : {}),
        };
        reports.push(this.dispatcher.dispatch('onModelCallError', event, call.dispatchOptions));
      },
    };
    try {
      return await this.modelCalls.complete(call.agent, request, call.operationId, observer, deltas);
    } finally {
      // Observers never mask the call's own outcome: their failures are theirs (D1).
      await Promise.allSettled(reports);
    }
  }

  private async transformedResponse(call: GovernedCall, model: string, response: ChatResponse): Promise<ChatResponse> {
    const answer = hookResponse(response);
    const context = new ModelResponseContext({ runId: call.operationId, agentId: call.agent.id, model, ...answer });
    const transformed = await this.dispatcher.transform('after_model_response', context, call.dispatchOptions);
    if (transformed === context) return response;
    const kept = new Set(transformed.toolCalls.map((c) => c.id));
    return { ...response, content: transformed.content, toolCalls: response.toolCalls.filter((c) => kept.has(c.id)) };
  }
}

/** A mock is the model's answer (K3): its tool calls get ids as a provider's would, and it costs nothing. */
function mockedResponse({ response }: ModelMockOutcome): ChatResponse {
  const toolCalls = (response.toolCalls ?? []).map((c) => ({ id: `call_${randomUUID()}`, identifier: c.identifier, apiName: c.apiName, args: { ...c.args } }));
  return { content: response.content, toolCalls, usage: { inputTokens: response.usage?.inputTokens ?? 0, outputTokens: response.usage?.outputTokens ?? 0, costUsd: 0 } };
}

