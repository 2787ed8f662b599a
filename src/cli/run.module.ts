import { type DynamicModule, Module } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { AgentHooksModule } from '../agent-hooks.module.js';
import type { AgentHooksModuleOptions } from '../agent-hooks.options.js';
import { ClockTools } from '../server/clock.tools.js';

/** `agentctl run`: the library module and the server's built-in tools, no HTTP surface. */
@Module({})
export class RunModule {
  static forRoot(options: AgentHooksModuleOptions): DynamicModule {
    return {
      module: RunModule,
      imports: [EventEmitterModule.forRoot(), AgentHooksModule.forRoot(options)],
      providers: [ClockTools],
    };
  }
}
