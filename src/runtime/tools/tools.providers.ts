/**
 * The tools room's providers, for the root module to add (it must also import `DiscoveryModule` and provide
 * `HookDispatcher`, as AgentHooksModule does). `TOOL_CATALOG` is the port the runtime injects.
 * `MCP_SERVERS` (the `mcpServers` map) and `TOOLS_OPTIONS` are optional: provide them from the config.
 */
import type { Provider } from '@nestjs/common';
import { ArgumentValidator } from './argument-validator.js';
import { LateToolResults } from './late-tool-results.js';
import { LocalToolRegistry } from './local-tool.registry.js';
import { McpServersService } from './mcp-servers.service.js';
import { ToolCatalogService } from './tool-catalog.service.js';
import { ToolExplorer } from './tool.explorer.js';
import { TOOL_CATALOG } from './tool-types.js';

export const TOOLS_PROVIDERS: Provider[] = [
  ArgumentValidator,
  LateToolResults,
  LocalToolRegistry,
  ToolExplorer,
  McpServersService,
  ToolCatalogService,
  { provide: TOOL_CATALOG, useExisting: ToolCatalogService },
];

/** What other modules may inject. */
export const TOOLS_EXPORTS = [TOOL_CATALOG, ToolCatalogService, LocalToolRegistry, McpServersService, LateToolResults];
