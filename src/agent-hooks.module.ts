/**
 * `AgentHooksModule.forRoot(options)` / `forRootAsync({ imports, inject, useFactory })`. Every provider is an
 * instance per app: two apps in one process share nothing.
 */
import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AgentHooksConfigurableModule, AGENT_HOOKS_MODULE_OPTIONS } from './agent-hooks.module-definition.js';
import type { AgentHooksModuleOptions } from './agent-hooks.options.js';
import { HookDispatcher } from './hooks/hook-dispatcher.js';
import { HookExplorer } from './hooks/hook-explorer.js';
import { HookMetadataAccessor } from './hooks/hook-metadata.accessor.js';
import { CALLER_HOOK_VALIDATOR, ENVIRONMENT_HOOK_SOURCE, WEBHOOK_DELIVERY } from './hooks/hook-ports.js';
import { HookReadinessWatcher } from './hooks/hook-readiness.watcher.js';
import { HookRegistry } from './hooks/hook-registry.js';
import { EnvironmentWebhookSource } from './webhooks/environment-hooks.js';
import { WebhookCallerHookValidator } from './webhooks/webhook-config.schema.js';
import { WebhookDeliveryService } from './webhooks/webhook-delivery.service.js';

const appUrlOf = (options: AgentHooksModuleOptions) => (options.webhooks?.appUrl ? { appUrl: options.webhooks.appUrl } : {});

@Module({
  imports: [DiscoveryModule],
  providers: [
    HookMetadataAccessor,
    HookRegistry,
    HookDispatcher,
    HookExplorer,
    HookReadinessWatcher,
    WebhookDeliveryService,
    // The webhooks room implements the ports the hooks core declares (DESIGN §2).
    { provide: WEBHOOK_DELIVERY, useExisting: WebhookDeliveryService },
    {
      provide: ENVIRONMENT_HOOK_SOURCE,
      useFactory: (options: AgentHooksModuleOptions) => new EnvironmentWebhookSource(appUrlOf(options)),
      inject: [AGENT_HOOKS_MODULE_OPTIONS],
    },
    {
      provide: CALLER_HOOK_VALIDATOR,
      useFactory: (options: AgentHooksModuleOptions) => new WebhookCallerHookValidator(appUrlOf(options)),
      inject: [AGENT_HOOKS_MODULE_OPTIONS],
    },
  ],
  exports: [HookRegistry, HookDispatcher, HookReadinessWatcher, WebhookDeliveryService],
})
export class AgentHooksModule extends AgentHooksConfigurableModule {}
