/**
 * The HTTP API and the console inside a host's own Nest app (DESIGN §12, SPEC G9): the `/v1` routes and
 * `/console/` under the host's prefix (Nest's `RouterModule`), behind the host's guards, pipes and
 * interceptors. The owner of every request comes from the host's resolver; the API-key guard belongs to
 * the standalone server only. The routes keep the server's own error shape (a controller-scoped filter)
 * and its body limits (a middleware on these routes only), and add nothing global to the host's app.
 *
 * The routes use the runtime of `AgentHooksModule`, which the host registers with `isGlobal: true` so
 * that a sibling module sees it, as `TypeOrmModule.forFeature` sees `TypeOrmModule.forRoot`.
 */
import { Module, type DynamicModule, type MiddlewareConsumer, type NestModule, type Provider } from '@nestjs/common';
import { RouterModule } from '@nestjs/core';
import { AgentRuntime } from '../../runtime/agent-runtime.js';
import { OperationChanges } from '../../runtime/reading/operation-changes.js';
import { OperationFollower } from '../../runtime/reading/operation-follower.js';
import { OperationReadService } from '../../runtime/reading/operation-read.service.js';
import { AgentTracer } from '../../tracing/agent-tracer.js';
import { API_CONTROLLERS } from '../api/api.providers.js';
import { CallerEventStreams } from '../api/caller-event-stream.js';
import { CALLER_RESOLVER } from '../api/caller-resolver.js';
import { CallerGuard } from '../api/caller.guard.js';
import { OperationEventStreams } from '../api/operation-event-stream.js';
import { OperationReader } from '../api/operation-reader.js';
import { ApiKeyRing } from '../api/api-keys.js';
import { SERVER_API_OPTIONS, type ServerApiOptions } from '../api/server-api.options.js';
import { CONSOLE_CONTROLLERS, consoleProviders } from '../console/console.providers.js';
import { AGENT_HOOKS_HTTP_OPTIONS, type AgentHooksHttpOptions } from './agent-hooks-http.options.js';
import { HostOwnerResolver } from './host-owner.resolver.js';
import { MountedBodyLimits } from './mounted-body-limits.middleware.js';

/** Thrown at bootstrap when the routes would have no runtime to serve. */
export class AgentHooksHttpModuleError extends Error {
  override readonly name = 'AgentHooksHttpModuleError';
}

/** What the routes use of `AgentHooksModule`, found once: a missing core module is named, not a token. */
interface CoreServices {
  reads: OperationReadService;
  follower: OperationFollower;
  changes: OperationChanges;
  tracer: AgentTracer;
}

const CORE_SERVICES = Symbol('nest-agent-hooks:MountedCoreServices');

const coreServices: Provider = {
  provide: CORE_SERVICES,
  useFactory: (runtime?: AgentRuntime, reads?: OperationReadService, follower?: OperationFollower, changes?: OperationChanges, tracer?: AgentTracer): CoreServices => {
    if (runtime && reads && follower && changes && tracer) return { reads, follower, changes, tracer };
    throw new AgentHooksHttpModuleError(
      'AgentHooksHttpModule needs AgentHooksModule: import AgentHooksModule.forRoot({ …, isGlobal: true }) in your app before AgentHooksHttpModule.register(…)',
    );
  },
  inject: [AgentRuntime, OperationReadService, OperationFollower, OperationChanges, AgentTracer].map((token) => ({ token, optional: true })),
};

/**
 * The routes' providers, built from `CORE_SERVICES`: every one that needs the core module goes through its
 * one check, so a missing core module is named before Nest reports any of their dependencies.
 */
const routeProviders: Provider[] = [
  coreServices,
  { provide: OperationReader, useFactory: (core: CoreServices) => new OperationReader(core.reads), inject: [CORE_SERVICES] },
  { provide: OperationEventStreams, useFactory: (core: CoreServices) => new OperationEventStreams(core.follower), inject: [CORE_SERVICES] },
  { provide: CallerEventStreams, useFactory: (core: CoreServices) => new CallerEventStreams(core.changes), inject: [CORE_SERVICES] },
  { provide: MountedBodyLimits, useFactory: (core: CoreServices) => new MountedBodyLimits(core.tracer), inject: [CORE_SERVICES] },
];

// What does not depend on the options is static metadata (not part of the dynamic module's identity).
@Module({
  controllers: API_CONTROLLERS,
  providers: [...routeProviders, { provide: CALLER_RESOLVER, useClass: HostOwnerResolver }, CallerGuard],
})
export class AgentHooksHttpModule implements NestModule {
  static register(options: AgentHooksHttpOptions): DynamicModule {
    const api: ServerApiOptions = { apiKeys: ApiKeyRing.none, callerEnvAllowlist: new Set(options.callerEnvAllowlist ?? []) };
    const withConsole = options.console !== false;
    return {
      module: AgentHooksHttpModule,
      imports: [RouterModule.register([{ path: options.path, module: AgentHooksHttpModule }])],
      controllers: withConsole ? CONSOLE_CONTROLLERS : [],
      providers: [{ provide: AGENT_HOOKS_HTTP_OPTIONS, useValue: options }, { provide: SERVER_API_OPTIONS, useValue: api }, ...(withConsole ? consoleProviders : [])],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(MountedBodyLimits).forRoutes(...API_CONTROLLERS);
  }
}
