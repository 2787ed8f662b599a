/**
 * `@OnHook(point, options)`: marks a provider method as a hook. Metadata is an array on the method, so
 * decorators stack (two `@OnHook` on one method register two hooks). Validation happens at bootstrap,
 * where the error can name class and method.
 */
import type { FailurePolicy, OnErrorPolicy } from './agent-hook.js';
import type { HookPoint } from './hook-points.js';

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

export function OnHook(point: HookPoint, options: OnHookOptions = {}): MethodDecorator {
  return (_target, _key, descriptor: PropertyDescriptor) => {
    const method = descriptor.value as object;
    const existing = (Reflect.getMetadata(ON_HOOK_METADATA, method) as OnHookMetadata[] | undefined) ?? [];
    // A fresh array each time: the metadata of a parent-class method is never mutated.
    Reflect.defineMetadata(ON_HOOK_METADATA, [...existing, { point, options: { ...options } }], method);
    return descriptor;
  };
}
