/**
 * The loaded agents.yaml as a provider. Which file: `configFile`; without one, `config/agents.yaml` in the
 * working folder when it exists (the rule agentctl follows too, config-file-rule.ts); with `false` or no
 * file, the module runs with no agents (an app that only uses hooks, or registers everything in code).
 * A bad file fails the bootstrap with file:line:key.
 * Its `hooks:` entries (with plugins.toml) are resolved and added to the registry while the module's
 * providers are created: before module init, so before any `@OnHook` is discovered (config hooks come
 * first within a point, DESIGN §3) and before `on_engine_start` fires.
 */
import type { Provider } from '@nestjs/common';
import { AGENT_HOOKS_MODULE_OPTIONS } from '../agent-hooks.module-definition.js';
import type { AgentHooksModuleOptions } from '../agent-hooks.options.js';
import { HookRegistry } from '../hooks/hook-registry.js';
import type { RegisteredHook } from '../hooks/registered-hook.js';
import { AGENT_DIRECTORY } from '../runtime/agent-directory.port.js';
import { checkedCodeModels } from '../runtime/models/code-models.js';
import { CLIENT_TOOLS, MCP_SERVERS, TOOLS_OPTIONS, type ClientToolsConfig } from '../runtime/tools/tools.options.js';
import type { AgentsConfig } from './agents-config.js';
import { loadAgentsConfigSync } from './agents-config.loader.js';
import { configFileToLoad } from './config-file-rule.js';
import { loadConfigHooks } from './config-hooks.loader.js';
import { ConfigAgentDirectory } from './config-agent-directory.js';

export const AGENTS_CONFIG = Symbol('nest-agent-hooks:AgentsConfig');
/** The config hooks, already added to the `HookRegistry` (for inspection, e.g. by `agentctl validate`). */
export const CONFIG_HOOKS = Symbol('nest-agent-hooks:ConfigHooks');

const EMPTY: Pick<AgentsConfig, 'system' | 'metadata' | 'models' | 'mcpServers' | 'agents'> = {
  system: 'nest-agent-hooks',
  metadata: {},
  models: {},
  mcpServers: {},
  agents: {},
};

export const AGENTS_CONFIG_PROVIDERS: Provider[] = [
  {
    provide: AGENTS_CONFIG,
    useFactory: (options: AgentHooksModuleOptions) => {
      const file = configFileToLoad(options.configFile);
      return file !== undefined ? loadAgentsConfigSync(file) : EMPTY;
    },
    inject: [AGENT_HOOKS_MODULE_OPTIONS],
  },
  {
    provide: CONFIG_HOOKS,
    useFactory: async (options: AgentHooksModuleOptions, config: AgentsConfig | typeof EMPTY, registry: HookRegistry): Promise<readonly RegisteredHook[]> => {
      const hooks = 'source' in config ? await loadConfigHooks(config, options.pluginsFile !== undefined ? { pluginsFile: options.pluginsFile } : {}) : [];
      registry.addAppHooks(hooks);
      return hooks;
    },
    inject: [AGENT_HOOKS_MODULE_OPTIONS, AGENTS_CONFIG, HookRegistry],
  },
  {
    provide: ConfigAgentDirectory,
    // DESIGN §12: `forRoot({ models })` is checked here, at module init, with the names agents.yaml gives.
    useFactory: (options: AgentHooksModuleOptions, config: AgentsConfig) => new ConfigAgentDirectory(config, checkedCodeModels(options.models)),
    inject: [AGENT_HOOKS_MODULE_OPTIONS, AGENTS_CONFIG],
  },
  { provide: AGENT_DIRECTORY, useExisting: ConfigAgentDirectory },
  { provide: MCP_SERVERS, useFactory: (config: AgentsConfig) => config.mcpServers ?? {}, inject: [AGENTS_CONFIG] },
  { provide: CLIENT_TOOLS, useFactory: (config: AgentsConfig | typeof EMPTY) => clientToolsOf(config), inject: [AGENTS_CONFIG] },
  { provide: TOOLS_OPTIONS, useValue: {} },
];

/** The `clientTools:` map as declarations, in file order. */
function clientToolsOf(config: AgentsConfig | typeof EMPTY): ClientToolsConfig {
  if (!('clientTools' in config)) return [];
  return Object.entries(config.clientTools).map(([name, tool]) => {
    const slash = name.indexOf('/');
    return { identifier: name.slice(0, slash), apiName: name.slice(slash + 1), description: tool.description, parameters: tool.parameters };
  });
}
