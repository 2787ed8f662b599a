/** The `mcpServers` map handed to the tools room: configuration errors fail the start, naming the key. */
import { McpServersService } from '../../../src/runtime/tools/mcp-servers.service.js';
import { ToolConfigurationError } from '../../../src/runtime/tools/tool-errors.js';
import { compileTools } from './tools-boot.js';

async function compileFailure(servers: Record<string, { url: string }>): Promise<Error> {
  const error = await compileTools([], undefined, servers).then(
    async (moduleRef) => {
      await moduleRef.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

describe('tools: mcpServers configuration', () => {
  it('a server id that cannot be a tool identifier', async () => {
    const error = await compileFailure({ 'my server': { url: 'http://127.0.0.1:1/mcp' } });
    expect(error).toBeInstanceOf(ToolConfigurationError);
    expect(error.message).toContain('mcpServers.my server');
  });

  it('a url that is not http(s) or not a url at all', async () => {
    expect((await compileFailure({ kb: { url: 'ftp://example.com/mcp' } })).message).toBe(
      'mcpServers.kb.url: only http and https are supported (Streamable HTTP)',
    );
    expect((await compileFailure({ kb: { url: 'not a url' } })).message).toBe('mcpServers.kb.url: not a valid URL');
  });

  it('a valid map compiles; nothing is contacted before bootstrap', async () => {
    const moduleRef = await compileTools([], undefined, { kb: { url: 'http://127.0.0.1:1/mcp' } });
    const servers = moduleRef.get(McpServersService);
    expect(servers.serverIds()).toEqual(['kb']);
    expect(servers.state('kb')).toBe('idle');
    await moduleRef.close();
    expect(servers.state('kb')).toBe('closed');
  });
});
