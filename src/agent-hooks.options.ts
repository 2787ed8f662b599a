/** Options of `AgentHooksModule.forRoot` (DESIGN §6). Fields beyond the hooks room are read by later rooms. */
export interface AgentHooksWebhookOptions {
  /** CIDRs webhooks may reach in addition to public addresses (the SSRF guard). */
  allowNetworks?: string[];
  /** Signs outgoing webhooks (Standard Webhooks); read from the environment by the app, never stored. */
  signingSecret?: string;
  /** Base URL for app-relative webhook URLs (`/path`). */
  appUrl?: string;
}

export interface AgentHooksModuleOptions {
  /**
   * `'sqlite:./data/agent-hooks.sqlite'` (default), `'sqlite::memory:'`, `'postgres://…'`, TypeORM options, or
   * `'host'`: the host app's default TypeORM DataSource, which must list `AGENT_HOOKS_ENTITIES` and have
   * `AGENT_HOOKS_MIGRATIONS` applied by the host's own pipeline; we never migrate or close it.
   */
  database?: string | Record<string, unknown>;
  mode?: 'local' | 'queue';
  redis?: string;
  configFile?: string;
  pluginsFile?: string;
  webhooks?: AgentHooksWebhookOptions;
}
