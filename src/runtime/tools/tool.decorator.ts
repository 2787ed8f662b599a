/**
 * `@Tool(options)`: marks a provider method as a local tool the model may call (DESIGN §6). Metadata is an
 * array on the method, as with `@OnHook`, so one method may be offered under several names. Nothing is
 * checked here: validation happens at bootstrap (ToolExplorer), where the error can name class and method.
 */
import type { ToolRetry } from './tool-effects.js';

export const TOOL_METADATA = 'nest-agent-hooks:tool';

export interface ToolOptions {
  /** First half of the tool's name `identifier/apiName`; `^[A-Za-z0-9_.-]+$`. */
  identifier: string;
  /** Second half of the tool's name; `^[A-Za-z0-9_.-]+$`. */
  apiName: string;
  /** What the model is told the tool does. */
  description: string;
  /** JSON Schema of the arguments (an object schema); checked with ajv at bootstrap and on every call. */
  parameters: Record<string, unknown>;
  /** A human approves each call before it runs. */
  requiresApproval?: boolean;
  /**
   * F3: the deadline of one attempt, in ms (1 to 86 400 000): past it the context's signal aborts and the
   * call is a tool error of type `timeout`. Wins over the agent's `timeoutMs`; default 60 000.
   */
  timeoutMs?: number;
  /** F2: running a call twice with its idempotency key has the effect of running it once. */
  idempotent?: boolean;
  /** F3: retries with full-jitter backoff and the same key; idempotent tools only (else a bootstrap error). */
  retry?: ToolRetry;
  /** Calls are handed to an outside executor and completed through `completeDeferred`. */
  deferred?: boolean;
}

export function Tool(options: ToolOptions): MethodDecorator {
  return (_target, _key, descriptor: PropertyDescriptor) => {
    const method = descriptor.value as object;
    const existing = readToolMetadata(method) ?? [];
    // A fresh array each time: the metadata of a parent-class method is never mutated.
    Reflect.defineMetadata(TOOL_METADATA, [...existing, { ...options }], method);
    return descriptor;
  };
}

/** The `@Tool` entries of a method, or nothing. */
export function readToolMetadata(method: unknown): readonly ToolOptions[] | undefined {
  if (!method || (typeof method !== 'function' && typeof method !== 'object')) return undefined;
  const metadata = Reflect.getMetadata(TOOL_METADATA, method as object) as ToolOptions[] | undefined;
  return metadata && metadata.length > 0 ? metadata : undefined;
}
