/**
 * Stand-ins for the enterprise example's two MCP servers (SPEC X), real SDK servers (McpServer +
 * StreamableHTTPServerTransport, stateful sessions) on loopback: "context7" answers 401 to any request
 * without `Authorization: Bearer <token>`; "deepwiki" is public and records any request that carried an
 * Authorization header (the test fails on it) and refuses it. Both record what reached them.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { McpSessions, readJsonBody } from '../mcp/mcp-sessions.js';

export interface ResearchServer {
  readonly url: string;
  /** JSON-RPC methods that were answered (authorized requests only). */
  readonly answered: string[];
  /** `tools/call` tool names that were answered. */
  readonly toolCalls: string[];
  /** Requests refused for a missing or wrong bearer token (context7). */
  unauthorized: number;
  /** Requests that carried an Authorization header (deepwiki: must stay 0). */
  authorizationSeen: number;
  close(): Promise<void>;
}

type Register = (server: McpServer) => void;

export const CONTEXT7_DOCS = 'NestJS docs: providers are injected through constructors.';
/** DeepWiki's long answer: 20,000 characters, with a marker at the cut so truncation is visible. */
export const LONG_WIKI_PAGE = 'w'.repeat(8_000) + 'CUT-HERE' + 'x'.repeat(20_000 - 8_000 - 'CUT-HERE'.length);

const registerContext7: Register = (server) => {
  server.registerTool('get-library-docs', { description: 'Library docs', inputSchema: { libraryId: z.string(), topic: z.string().optional() } }, async () => ({
    content: [{ type: 'text', text: CONTEXT7_DOCS }],
  }));
};

const registerDeepwiki: Register = (server) => {
  server.registerTool('read_wiki_contents', { description: 'Wiki pages of a repository', inputSchema: { repoName: z.string() } }, async () => ({
    content: [{ type: 'text', text: LONG_WIKI_PAGE }],
  }));
};

/** "context7": every request needs `Authorization: Bearer <token>`. */
export function startContext7(token: string): Promise<ResearchServer> {
  return start('context7', registerContext7, (req, server) => {
    if (req.headers.authorization === `Bearer ${token}`) return true;
    server.unauthorized++;
    return false;
  });
}

/** "deepwiki": public; a request with any Authorization header is counted and refused. */
export function startDeepwiki(): Promise<ResearchServer> {
  return start('deepwiki', registerDeepwiki, (req, server) => {
    if (req.headers.authorization === undefined) return true;
    server.authorizationSeen++;
    return false;
  });
}

async function start(name: string, register: Register, admit: (req: IncomingMessage, server: ResearchServer) => boolean): Promise<ResearchServer> {
  const sessions = new McpSessions(() => {
    const server = new McpServer({ name, version: '1.0.0' });
    register(server);
    return server;
  });
  const self: ResearchServer & { url: string } = {
    url: '', // set once listening
    answered: [],
    toolCalls: [],
    unauthorized: 0,
    authorizationSeen: 0,
    async close() {
      await sessions.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
  const http: Server = createServer((req, res) => {
    void (async () => {
      const body = req.method === 'POST' ? await readJsonBody(req) : undefined;
      if (!admit(req, self)) {
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
        res.end(JSON.stringify({ error: 'unauthorized' }));
        return;
      }
      for (const message of messagesOf(body)) {
        if (typeof message.method === 'string') self.answered.push(message.method);
        if (message.method === 'tools/call') self.toolCalls.push(String((message.params as { name?: unknown } | undefined)?.name));
      }
      await sessions.handle(req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  self.url = `http://127.0.0.1:${port}/mcp`;
  return self;
}

function messagesOf(body: unknown): { method?: unknown; params?: unknown }[] {
  const messages = Array.isArray(body) ? body : body ? [body] : [];
  return messages.filter((m): m is { method?: unknown; params?: unknown } => typeof m === 'object' && m !== null);
}
