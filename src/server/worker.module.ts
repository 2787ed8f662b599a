import { type DynamicModule, Module } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { AgentHooksModule } from '../agent-hooks.module.js';
import type { AgentHooksModuleOptions } from '../agent-hooks.options.js';
import { ClockTools } from './clock.tools.js';

/** A queue worker (`agentctl worker`): the library module running step jobs, no HTTP surface. */
@Module({})
export class WorkerModule {
  static forRoot(options: AgentHooksModuleOptions): DynamicModule {
    return {
      module: WorkerModule,
      imports: [EventEmitterModule.forRoot(), AgentHooksModule.forRoot({ ...options, mode: 'queue', queue: { ...options.queue, worker: true } })],
      // The same built-in tool as the server: every worker must be able to run every configured tool.
      providers: [ClockTools],
    };
  }
}
