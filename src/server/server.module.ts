import { type DynamicModule, Module } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { AgentHooksModule } from '../agent-hooks.module.js';
import type { AgentHooksModuleOptions } from '../agent-hooks.options.js';
import { ClockTools } from './clock.tools.js';
import { HealthController } from './health.controller.js';

/** The standalone server: the library module plus its HTTP surface. */
@Module({})
export class ServerModule {
  static forRoot(options: AgentHooksModuleOptions): DynamicModule {
    return {
      module: ServerModule,
      imports: [EventEmitterModule.forRoot(), AgentHooksModule.forRoot(options)],
      controllers: [HealthController],
      // The built-in tool the offline quickstart config uses.
      providers: [ClockTools],
    };
  }
}
