/**
 * `@OnHook(point, options)`: marks a provider method as a hook. Metadata is an array on the method, so
 * decorators stack (two `@OnHook` on one method register two hooks). Validation happens at bootstrap,
 * where the error can name class and method.
 */
import type { FailurePolicy, OnErrorPolicy } from './agent-hook.js';
import type { HookInvocation } from './hook-invocation.js';
import type { AgentHookPoint, HookPayloads, HookPoint } from './hook-points.js';

export const ON_HOOK_METADATA = 'nest-agent-hooks:on-hook';

export interface OnHookOptions {
  /** Hook id in outcome records and logs; default `ClassName.method`. */
  id?: string;
  /** Regex over `${identifier}/${apiName}` (W5); tool points only. */
  matcher?: string;
  /** Engine family (E6); default `fail`. */
  failurePolicy?: FailurePolicy;
  /** Agent-family controls; giving it makes the handler a control that a mock never skips. */
  onError?: OnErrorPolicy;
  /**
   * Sort key among app hooks (lower first, default 0); ties keep registration order. agents.yaml hooks
   * also sit at 0 and are registered first, so by default they run before decorators; a negative order
   * runs before them, a positive one after every order-0 hook.
   */
  order?: number;
  /** A handler running longer fails with code `timeout`. */
  timeoutMs?: number;
}

export interface OnHookMetadata {
  point: HookPoint;
  options: OnHookOptions;
}

/**
 * What a hook method at `P` is called with (see the dispatcher): the event itself for the agent family,
 * a `HookInvocation` carrying the point's context for the engine family.
 */
export type HookArgument<P extends HookPoint> = P extends AgentHookPoint ? HookPayloads[P] : HookInvocation<HookPayloads[P]>;

/** A method `@OnHook(P)` accepts: its parameter must accept `HookArgument<P>`; what it returns is checked at run time. */
export type OnHookMethod<P extends HookPoint> = (argument: HookArgument<P>) => unknown;

/**
 * A method decorator typed by the point: `@OnHook('afterToolCall') a(e: BeforeToolCallEvent)` does not
 * compile. Generic over the method so its own signature is kept as declared. Typed as returning `void`
 * (it hands back the same descriptor at run time) so a mismatch is reported as the parameter's types.
 */
export type OnHookDecorator<P extends HookPoint> = <M extends OnHookMethod<P>>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void;

export function OnHook<P extends HookPoint>(point: P, options: OnHookOptions = {}): OnHookDecorator<P> {
  return (_target, _key, descriptor) => {
    const method = descriptor.value as object;
    const existing = (Reflect.getMetadata(ON_HOOK_METADATA, method) as OnHookMetadata[] | undefined) ?? [];
    // A fresh array each time: the metadata of a parent-class method is never mutated.
    Reflect.defineMetadata(ON_HOOK_METADATA, [...existing, { point, options: { ...options } }], method);
    return descriptor;
  };
}
