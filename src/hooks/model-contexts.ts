/**
 * Engine-family contexts of the model call (SPEC K2): immutable, `with…` copies. A request context keeps
 * the offer it was built with (G1), so a transform can narrow the tools but never offer one the agent
 * was not offered; a response context never gains a tool call. Either is a hook failure under the hook's
 * `failure_policy` (K2). Content never shows by inspection or serialization (S1).
 */
import { stampBrands } from './context-brand.js';
import type { ModelCallMessage, ModelCallPurpose, ModelCallToolCall, ModelCallUsage } from './model-call-events.js';

const INSPECT = Symbol.for('nodejs.util.inspect.custom');
const ROLES: ReadonlySet<string> = new Set(['system', 'user', 'assistant', 'tool']);

/** A transform's output breaks the model call's rules (K2); recorded with code `invalid_return`. */
export class ModelTransformError extends Error {
  override readonly name = 'ModelTransformError';
  readonly code = 'invalid_return';
}

function frozenMessages(messages: readonly ModelCallMessage[]): readonly ModelCallMessage[] {
  if (!Array.isArray(messages)) throw new ModelTransformError('messages must be an array');
  return Object.freeze(
    messages.map((message: ModelCallMessage) => {
      if (message === null || typeof message !== 'object' || !ROLES.has(message.role) || typeof message.content !== 'string') {
        throw new ModelTransformError('each message needs a role (system, user, assistant, tool) and a string content');
      }
      return Object.freeze({ ...message });
    }),
  );
}

export interface ModelRequestInit {
  runId: string;
  agentId: string;
  model: string;
  purpose: ModelCallPurpose;
  messages: readonly ModelCallMessage[];
  toolNames: readonly string[];
  /** The tools G1 offered (`identifier/apiName`); default `toolNames`. */
  offered?: readonly string[];
}

/** The request as it will be sent; `before_model_request` transforms return a copy (K1, K2). */
export class ModelRequestContext {
  static readonly brand = 'ModelRequestContext';
  readonly runId: string;
  readonly agentId: string;
  readonly model: string;
  readonly purpose: ModelCallPurpose;
  readonly messages: readonly ModelCallMessage[];
  readonly toolNames: readonly string[];
  readonly #offered: ReadonlySet<string>;

  constructor(init: ModelRequestInit) {
    this.runId = init.runId;
    this.agentId = init.agentId;
    this.model = init.model;
    this.purpose = init.purpose;
    this.messages = frozenMessages(init.messages);
    this.toolNames = Object.freeze([...init.toolNames]);
    this.#offered = new Set(init.offered ?? init.toolNames);
    stampBrands(this, [ModelRequestContext.brand]);
    Object.freeze(this);
  }

  /** A copy whose request sends `messages` instead (e.g. with personal data redacted). */
  withMessages(messages: readonly ModelCallMessage[]): ModelRequestContext {
    return new ModelRequestContext({ ...this.init(), messages });
  }

  /** A copy offering only `names`; a name the agent was not offered throws (K2, G1). */
  withToolNames(names: readonly string[]): ModelRequestContext {
    return new ModelRequestContext({ ...this.init(), toolNames: this.offerOnly(names) });
  }

  /**
   * What a transform's returned context means for this request: its messages and tools, this request's
   * identity and offer. A tool outside the offer is a hook failure (K2), however the context was built.
   */
  successor(returned: ModelRequestContext): ModelRequestContext {
    return new ModelRequestContext({ ...this.init(), messages: returned.messages, toolNames: this.offerOnly(returned.toolNames) });
  }

  toJSON(): object {
    return { runId: this.runId, agentId: this.agentId, model: this.model, purpose: this.purpose, messageCount: this.messages.length, toolNames: this.toolNames };
  }

  [INSPECT](): string {
    return `ModelRequestContext(${this.model}, ${this.purpose}, messages=<${this.messages.length}>, tools=[${this.toolNames.join(', ')}])`;
  }

  private offerOnly(names: readonly string[]): readonly string[] {
    if (!Array.isArray(names)) throw new ModelTransformError('toolNames must be an array');
    for (const name of names) {
      if (typeof name !== 'string' || !this.#offered.has(name)) throw new ModelTransformError('a transform may remove tools, never offer one the agent was not offered');
    }
    return names;
  }

  private init(): ModelRequestInit {
    const { runId, agentId, model, purpose, messages, toolNames } = this;
    return { runId, agentId, model, purpose, messages, toolNames, offered: [...this.#offered] };
  }
}

export interface ModelResponseInit {
  runId: string;
  agentId: string;
  model: string;
  content: string;
  toolCalls: readonly ModelCallToolCall[];
  finishReason: string;
  usage: ModelCallUsage;
}

/** The model's answer; `after_model_response` transforms return a copy (K1, K2). */
export class ModelResponseContext {
  static readonly brand = 'ModelResponseContext';
  readonly runId: string;
  readonly agentId: string;
  readonly model: string;
  readonly content: string;
  readonly toolCalls: readonly ModelCallToolCall[];
  readonly finishReason: string;
  readonly usage: ModelCallUsage;

  constructor(init: ModelResponseInit) {
    if (typeof init.content !== 'string') throw new ModelTransformError('content must be a string');
    this.runId = init.runId;
    this.agentId = init.agentId;
    this.model = init.model;
    this.content = init.content;
    this.toolCalls = Object.freeze(init.toolCalls.map((call) => Object.freeze({ ...call })));
    this.finishReason = init.finishReason;
    this.usage = Object.freeze({ ...init.usage });
    stampBrands(this, [ModelResponseContext.brand]);
    Object.freeze(this);
  }

  /** A copy whose answer reads `content` (e.g. with a secret masked). */
  withContent(content: string): ModelResponseContext {
    return new ModelResponseContext({ ...this.init(), content });
  }

  /**
   * What a transform's returned context means for this answer: its content, and of this answer's tool calls
   * those it kept. A tool call this answer did not have is a hook failure (K2: a transform never adds one).
   */
  successor(returned: ModelResponseContext): ModelResponseContext {
    const kept = new Set<string>();
    for (const call of returned.toolCalls) {
      if (!this.toolCalls.some((own) => own.id === call.id)) throw new ModelTransformError('a transform never adds tool calls');
      kept.add(call.id);
    }
    return new ModelResponseContext({ ...this.init(), content: returned.content, toolCalls: this.toolCalls.filter((call) => kept.has(call.id)) });
  }

  toJSON(): object {
    return { runId: this.runId, agentId: this.agentId, model: this.model, finishReason: this.finishReason, usage: this.usage, toolCallCount: this.toolCalls.length };
  }

  [INSPECT](): string {
    return `ModelResponseContext(${this.model}, ${this.finishReason}, content=<${this.content.length} chars>, toolCalls=<${this.toolCalls.length}>)`;
  }

  private init(): ModelResponseInit {
    const { runId, agentId, model, content, toolCalls, finishReason, usage } = this;
    return { runId, agentId, model, content, toolCalls, finishReason, usage };
  }
}
