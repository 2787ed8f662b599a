import { type DynamicModule, Module } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { AgentHooksModule } from '../agent-hooks.module.js';
import type { AgentHooksModuleOptions } from '../agent-hooks.options.js';
import { API_CONTROLLERS, apiProviders } from './api/api.providers.js';
import { serverApiOptionsFromEnvironment, type ServerApiOptions } from './api/server-api.options.js';
import { ClockTools } from './clock.tools.js';
import { CONSOLE_CONTROLLERS, consoleProviders } from './console/console.providers.js';
import { HealthController } from './health.controller.js';
import { OpsModule } from './ops/ops.module.js';
import { DEFAULT_REDIS_URL } from '../queue/queue-connection.js';

/** The standalone server: the library module plus its HTTP surface. */
@Module({})
export class ServerModule {
  /** `api`: API keys and the caller env allow-list; read from the environment when not given. */
  static forRoot(options: AgentHooksModuleOptions, api: ServerApiOptions = serverApiOptionsFromEnvironment()): DynamicModule {
    // One module object, imported here and by OpsModule: one AgentHooksModule instance.
    const agentHooks = AgentHooksModule.forRoot(options);
    return {
      module: ServerModule,
      imports: [
        EventEmitterModule.forRoot(),
        agentHooks,
        // In queue mode /readyz also pings the queue's Redis.
        OpsModule.forRoot(agentHooks, options.mode === 'queue' ? { redis: options.redis ?? DEFAULT_REDIS_URL } : {}),
      ],
      controllers: [HealthController, ...API_CONTROLLERS, ...CONSOLE_CONTROLLERS],
      // The built-in tool the offline quickstart config uses.
      providers: [ClockTools, ...apiProviders(api), ...consoleProviders],
    };
  }
}
