/**
 * Agent-family payloads of the model call (SPEC K2). Plain data: handlers receive them, control webhooks
 * receive them in full, notification webhooks only their metadata (K2, B2).
 */
import type { AgentEventBase } from './agent-events.js';

/** Which model call: a step's answer or a compaction summary (K1). */
export type ModelCallPurpose = 'step' | 'compaction';

/** A tool call of the model's answer, or of an assistant message in the request. */
export interface ModelCallToolCall {
  readonly id: string;
  readonly identifier: string;
  readonly apiName: string;
  readonly args: Record<string, unknown>;
}

/** One message of the request, as it will be sent (DESIGN §12). */
export interface ModelCallMessage {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly content: string;
  readonly toolCalls?: readonly ModelCallToolCall[];
  readonly toolCallId?: string;
}

export interface ModelCallUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costUsd: number;
}

/** The model's answer (K2); `finishReason` is `tool_calls` when it called tools, else the provider's (`stop`). */
export interface ModelCallResponse {
  readonly content: string;
  readonly toolCalls: readonly ModelCallToolCall[];
  readonly finishReason: string;
  readonly usage: ModelCallUsage;
}

/** What `beforeModelCall`'s `mock()` takes (DESIGN §12): the answer instead of the model's, costing nothing. */
export interface ModelCallMock {
  content: string;
  toolCalls?: readonly { identifier: string; apiName: string; args: Record<string, unknown> }[];
  usage?: Partial<Pick<ModelCallUsage, 'inputTokens' | 'outputTokens'>>;
}

type ModelEventBase = AgentEventBase & {
  /** The model's name as configured (`gpt-4.1`, `scripted`, …). */
  readonly model: string;
  readonly purpose: ModelCallPurpose;
};

/** `beforeModelCall` as serialized for webhooks and observers: no callbacks (M2). */
export type BeforeModelCallObservationEvent = ModelEventBase & {
  readonly type: 'beforeModelCall';
  readonly messages: readonly ModelCallMessage[];
  /** The offered tools (G1), after `before_model_request` transforms, as `identifier/apiName`. */
  readonly toolNames: readonly string[];
};

/** `beforeModelCall` as in-memory handlers receive it: with `mock()` (M1–M3, K1). */
export type BeforeModelCallEvent = BeforeModelCallObservationEvent & {
  /** Supplies the model's answer instead of calling it; returns whether this mock was accepted. */
  mock(response: ModelCallMock): boolean;
};

export type AfterModelCallEvent = ModelEventBase & {
  readonly type: 'afterModelCall';
  readonly messages: readonly ModelCallMessage[];
  readonly toolNames: readonly string[];
  readonly response: ModelCallResponse;
  /** The answer was supplied by a `beforeModelCall` mock (K3). */
  readonly mocked: boolean;
};

/** One failed attempt (K2, K4): the error's type and status, never a provider's body. */
export type OnModelCallErrorEvent = ModelEventBase & {
  readonly type: 'onModelCallError';
  readonly error: { readonly type: string; readonly status?: number };
  readonly attempt: number;
  readonly willRetry: boolean;
  readonly nextModel?: string;
};
