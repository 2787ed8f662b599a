/** Boots the tools room the way the root module will: AgentHooksModule (dispatcher) + DiscoveryModule + TOOLS_PROVIDERS. */
import type { Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test, type TestingModule } from '@nestjs/testing';
import { AgentHooksModule } from '../../../src/index.js';
import { MCP_SERVERS, TOOLS_OPTIONS, type McpServersConfig, type ToolsOptions } from '../../../src/runtime/tools/tools.options.js';
import { TOOLS_PROVIDERS } from '../../../src/runtime/tools/tools.providers.js';

export async function compileTools(providers: Provider[], options?: ToolsOptions, servers?: McpServersConfig): Promise<TestingModule> {
  return Test.createTestingModule({
    imports: [AgentHooksModule.forRoot({}), DiscoveryModule],
    providers: [
      ...TOOLS_PROVIDERS,
      ...providers,
      ...(options ? [{ provide: TOOLS_OPTIONS, useValue: options }] : []),
      ...(servers ? [{ provide: MCP_SERVERS, useValue: servers }] : []),
    ],
  }).compile();
}

export async function bootTools(providers: Provider[], options?: ToolsOptions, servers?: McpServersConfig): Promise<TestingModule> {
  const moduleRef = await compileTools(providers, options, servers);
  await moduleRef.init();
  return moduleRef;
}
