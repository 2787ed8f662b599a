/**
 * Discovers `@OnHook` methods at module init (before any `on_engine_start` or request) and registers them
 * as app hooks. Bad usage fails the bootstrap with an error naming class and method.
 */
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ContextIdFactory, DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { HookConfigurationError } from './hook-errors.js';
import { HookMetadataAccessor } from './hook-metadata.accessor.js';
import { HOOK_POINTS, isControlPoint, isHookPoint } from './hook-points.js';
import { HookReadinessWatcher } from './hook-readiness.watcher.js';
import { HookRegistry } from './hook-registry.js';
import { MAX_IDENTIFIER_LENGTH } from './input-limits.js';
import { compileMatcher } from './matcher.js';
import { matcherScopeProblem } from './matcher-scope.js';
import type { OnHookMetadata } from './on-hook.decorator.js';
import type { HookHandlerFn, RegisteredHook } from './registered-hook.js';

type MethodHost = Record<string, (...args: unknown[]) => unknown>;

@Injectable()
export class HookExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly accessor: HookMetadataAccessor,
    private readonly registry: HookRegistry,
    private readonly moduleRef: ModuleRef,
    private readonly readiness: HookReadinessWatcher,
  ) {}

  onModuleInit(): void {
    try {
      this.registry.addAppHooks(this.explore());
      this.readiness.setReady();
    } catch (error) {
      this.readiness.setErrored(error);
      throw error;
    }
  }

  /** All decorated methods of providers and controllers, in discovery order. */
  explore(): RegisteredHook[] {
    const found: RegisteredHook[] = [];
    const wrappers = [...this.discovery.getProviders(), ...this.discovery.getControllers()];
    for (const wrapper of wrappers) {
      if (!wrapper.instance || wrapper.isAlias) continue;
      const prototype = Object.getPrototypeOf(wrapper.instance) as object | null;
      if (!prototype) continue;
      for (const methodName of this.scanner.getAllMethodNames(prototype)) {
        const metadata = this.accessor.getHookMetadata((wrapper.instance as MethodHost)[methodName]);
        if (!metadata) continue;
        for (const entry of metadata) found.push(this.toHook(wrapper, methodName, entry));
      }
    }
    return found;
  }

  private toHook(wrapper: InstanceWrapper, methodName: string, { point, options }: OnHookMetadata): RegisteredHook {
    // The instance's class, not `metatype`: for a factory provider `metatype` is the factory function.
    const className =
      (wrapper.instance as { constructor?: { name?: string } }).constructor?.name ||
      (wrapper.metatype as { name?: string } | null)?.name ||
      String(wrapper.name);
    const where = `@OnHook on ${className}.${methodName}`;
    if (!isHookPoint(point)) throw new HookConfigurationError(`${where}: unknown hook point ${JSON.stringify(point)}`);
    const spec = HOOK_POINTS[point];
    const scope = matcherScopeProblem(point, options.matcher);
    if (scope) throw new HookConfigurationError(`${where}: matcher: ${scope}`);
    const matcher = compileMatcher(options.matcher, where);
    if (options.failurePolicy !== undefined && options.failurePolicy !== 'fail' && options.failurePolicy !== 'warn') {
      throw new HookConfigurationError(`${where}: failurePolicy must be 'fail' or 'warn'`);
    }
    if (options.onError !== undefined && options.onError !== 'continue' && options.onError !== 'block') {
      throw new HookConfigurationError(`${where}: onError must be 'continue' or 'block'`);
    }
    // Each family has its own failure setting (DESIGN §8); the other one would silently do nothing.
    if (options.failurePolicy !== undefined && spec.family !== 'engine') {
      throw new HookConfigurationError(`${where}: failurePolicy applies to engine-family points; ${point} takes onError`);
    }
    if (options.onError !== undefined && !isControlPoint(point)) {
      throw new HookConfigurationError(`${where}: onError applies to beforeToolCall/afterToolCall, beforeModelCall/afterModelCall controls only, not ${point}`);
    }
    if (options.timeoutMs !== undefined && !(Number.isFinite(options.timeoutMs) && options.timeoutMs > 0)) {
      throw new HookConfigurationError(`${where}: timeoutMs must be a positive number`);
    }
    // G6: the id is stored with every timeline row, in a varchar(255) column.
    const id = options.id ?? `${className}.${methodName}`;
    if (typeof id !== 'string' || id.length === 0 || id.length > MAX_IDENTIFIER_LENGTH) {
      throw new HookConfigurationError(`${where}: id must be a string of 1 to ${MAX_IDENTIFIER_LENGTH} characters`);
    }
    if (options.order !== undefined && !Number.isFinite(options.order)) {
      throw new HookConfigurationError(`${where}: order must be a finite number`);
    }
    return Object.freeze({
      id,
      point,
      source: 'decorator' as const,
      ...(matcher ? { matcher } : {}),
      failurePolicy: options.failurePolicy ?? 'fail',
      onError: options.onError ?? 'continue',
      control: options.onError !== undefined,
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      order: options.order ?? 0,
      handler: this.handlerFor(wrapper, methodName),
      plugin: className,
      method: methodName,
    });
  }

  /**
   * Static providers are called on their singleton. Request-scoped (or durable) providers get a fresh
   * instance per dispatch, resolved in their own context id, as `@nestjs/event-emitter` does.
   */
  private handlerFor(wrapper: InstanceWrapper, methodName: string): HookHandlerFn {
    if (wrapper.isDependencyTreeStatic() && !wrapper.isTransient) {
      const instance = wrapper.instance as MethodHost;
      const method = instance[methodName]!;
      return ((arg: unknown) => method.call(instance, arg)) as HookHandlerFn;
    }
    return (async (arg: unknown) => {
      const contextId = ContextIdFactory.create();
      this.moduleRef.registerRequestByContextId({ hookPayload: arg }, contextId);
      const instance = (await this.moduleRef.resolve(wrapper.token, contextId, { strict: false })) as MethodHost;
      return instance[methodName]!.call(instance, arg);
    }) as HookHandlerFn;
  }
}
