/**
 * Discovers `@Tool` methods at module init, as HookExplorer does for `@OnHook`, validates them and registers
 * them as local tools. Any bad usage fails the bootstrap with an error naming class and method.
 */
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ContextIdFactory, DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { MAX_IDENTIFIER_LENGTH } from '../../hooks/input-limits.js';
import { ArgumentValidator } from './argument-validator.js';
import type { LocalTool, LocalToolContext, LocalToolHandler } from './local-tool.js';
import { LocalToolRegistry } from './local-tool.registry.js';
import { readToolMetadata, type ToolOptions } from './tool.decorator.js';
import { ToolConfigurationError } from './tool-errors.js';
import { checkToolEffects } from './tool-effects.js';
import type { ToolDefinition } from './tool-types.js';

type MethodHost = Record<string, (...args: unknown[]) => unknown>;

const NAME_PART = /^[A-Za-z0-9_.-]+$/;

@Injectable()
export class ToolExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly registry: LocalToolRegistry,
    private readonly validator: ArgumentValidator,
    private readonly moduleRef: ModuleRef,
  ) {}

  onModuleInit(): void {
    this.registry.add(this.explore());
  }

  /** All `@Tool` methods of providers and controllers, in discovery order. */
  explore(): LocalTool[] {
    const found: LocalTool[] = [];
    const wrappers = [...this.discovery.getProviders(), ...this.discovery.getControllers()];
    for (const wrapper of wrappers) {
      if (!wrapper.instance || wrapper.isAlias) continue;
      const prototype = Object.getPrototypeOf(wrapper.instance) as object | null;
      if (!prototype) continue;
      for (const methodName of this.scanner.getAllMethodNames(prototype)) {
        const metadata = readToolMetadata((wrapper.instance as MethodHost)[methodName]);
        if (!metadata) continue;
        for (const options of metadata) found.push(this.toTool(wrapper, methodName, options));
      }
    }
    return found;
  }

  private toTool(wrapper: InstanceWrapper, methodName: string, options: ToolOptions): LocalTool {
    // The instance's class, not `metatype`: for a factory provider `metatype` is the factory function.
    const className =
      (wrapper.instance as { constructor?: { name?: string } }).constructor?.name ||
      (wrapper.metatype as { name?: string } | null)?.name ||
      String(wrapper.name);
    const origin = `${className}.${methodName}`;
    return Object.freeze({ definition: this.definitionOf(options, `@Tool on ${origin}`), handler: this.handlerFor(wrapper, methodName), origin });
  }

  private definitionOf(options: ToolOptions, where: string): ToolDefinition {
    const { identifier, apiName, description, parameters, requiresApproval, deferred } = (options ?? {}) as Partial<ToolOptions>;
    if (typeof identifier !== 'string' || !NAME_PART.test(identifier)) {
      throw new ToolConfigurationError(`${where}: identifier must match ${NAME_PART.source}`);
    }
    if (typeof apiName !== 'string' || !NAME_PART.test(apiName)) {
      throw new ToolConfigurationError(`${where}: apiName must match ${NAME_PART.source}`);
    }
    // G6: stored in varchar(255) columns; PostgreSQL would refuse a longer name mid-operation, SQLite not.
    for (const [key, value] of [['identifier', identifier], ['apiName', apiName]] as const) {
      if (value.length > MAX_IDENTIFIER_LENGTH) throw new ToolConfigurationError(`${where}: ${key} must be at most ${MAX_IDENTIFIER_LENGTH} characters`);
    }
    if (typeof description !== 'string') throw new ToolConfigurationError(`${where}: description must be a string`);
    if (!parameters || typeof parameters !== 'object' || Array.isArray(parameters)) {
      throw new ToolConfigurationError(`${where}: parameters must be a JSON Schema object`);
    }
    // Arguments arrive as one JSON object (ToolCatalog.execute), so the schema must describe an object.
    if (parameters.type !== 'object') throw new ToolConfigurationError(`${where}: parameters must be an object schema (type: 'object')`);
    try {
      this.validator.compileStrict(parameters);
    } catch (error) {
      throw new ToolConfigurationError(`${where}: parameters is not a valid JSON Schema: ${(error as Error).message}`, { cause: error });
    }
    if (requiresApproval !== undefined && typeof requiresApproval !== 'boolean') {
      throw new ToolConfigurationError(`${where}: requiresApproval must be a boolean`);
    }
    if (deferred !== undefined && typeof deferred !== 'boolean') throw new ToolConfigurationError(`${where}: deferred must be a boolean`);
    // F2, F3: idempotent, timeoutMs and retry (on idempotent tools only).
    const checked = checkToolEffects((options ?? {}) as Partial<ToolOptions>);
    if ('problem' in checked) throw new ToolConfigurationError(`${where}: ${checked.problem}`);
    return Object.freeze({
      ...checked.effects,
      identifier,
      apiName,
      description,
      parameters,
      requiresApproval: requiresApproval ?? false,
      deferred: deferred ?? false,
      source: 'local' as const,
    });
  }

  /**
   * Static providers are called on their singleton. Request-scoped (or transient) providers get a fresh
   * instance per call, resolved in their own context id, as HookExplorer does for hooks.
   */
  private handlerFor(wrapper: InstanceWrapper, methodName: string): LocalToolHandler {
    if (wrapper.isDependencyTreeStatic() && !wrapper.isTransient) {
      const instance = wrapper.instance as MethodHost;
      const method = instance[methodName]!;
      return (args, context) => method.call(instance, args, context);
    }
    return async (args: Record<string, unknown>, context: LocalToolContext) => {
      const contextId = ContextIdFactory.create();
      this.moduleRef.registerRequestByContextId({ toolCall: { toolCallId: context.toolCallId, operationId: context.operationId, idempotencyKey: context.idempotencyKey } }, contextId);
      const instance = (await this.moduleRef.resolve(wrapper.token, contextId, { strict: false })) as MethodHost;
      return instance[methodName]!.call(instance, args, context);
    };
  }
}
