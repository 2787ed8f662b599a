import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { AgentHooksModuleOptions } from './agent-hooks.options.js';

export const {
  ConfigurableModuleClass: AgentHooksConfigurableModule,
  MODULE_OPTIONS_TOKEN: AGENT_HOOKS_MODULE_OPTIONS,
  OPTIONS_TYPE: AGENT_HOOKS_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: AGENT_HOOKS_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<AgentHooksModuleOptions>({ moduleName: 'AgentHooks' })
  .setClassMethodName('forRoot')
  // `isGlobal` is an extra that only works with a transform that applies it.
  .setExtras({ isGlobal: false }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
