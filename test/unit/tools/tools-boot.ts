/** Boots the tools room as the root module wires it: AgentHooksModule brings the dispatcher and TOOLS_PROVIDERS. */
import type { Provider } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { AgentHooksModule } from '../../../src/index.js';
import { MCP_SERVERS, TOOLS_OPTIONS, type McpServersConfig, type ToolsOptions } from '../../../src/runtime/tools/tools.options.js';

export async function compileTools(providers: Provider[], options?: ToolsOptions, servers?: McpServersConfig): Promise<TestingModule> {
  // The root module brings the tools room; the test swaps in its options and MCP servers.
  return Test.createTestingModule({ imports: [AgentHooksModule.forRoot({ configFile: false })], providers })
    .overrideProvider(TOOLS_OPTIONS)
    .useValue(options ?? {})
    .overrideProvider(MCP_SERVERS)
    .useValue(servers ?? {})
    .compile();
}

export async function bootTools(providers: Provider[], options?: ToolsOptions, servers?: McpServersConfig): Promise<TestingModule> {
  const moduleRef = await compileTools(providers, options, servers);
  await moduleRef.init();
  return moduleRef;
}
