/**
 * `AgentHooksModule.forRoot(options)` / `forRootAsync({ imports, inject, useFactory })`. Every provider is an
 * instance per app: two apps in one process share nothing.
 */
import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AgentHooksConfigurableModule } from './agent-hooks.module-definition.js';
import { HookDispatcher } from './hooks/hook-dispatcher.js';
import { HookExplorer } from './hooks/hook-explorer.js';
import { HookMetadataAccessor } from './hooks/hook-metadata.accessor.js';
import { HookReadinessWatcher } from './hooks/hook-readiness.watcher.js';
import { HookRegistry } from './hooks/hook-registry.js';

@Module({
  imports: [DiscoveryModule],
  providers: [HookMetadataAccessor, HookRegistry, HookDispatcher, HookExplorer, HookReadinessWatcher],
  exports: [HookRegistry, HookDispatcher, HookReadinessWatcher],
})
export class AgentHooksModule extends AgentHooksConfigurableModule {}
