/**
 * The Streamable HTTP session handling every test MCP server shares (the MCP SDK's transport per session):
 * an `initialize` POST opens a session with a fresh server, later requests carry `mcp-session-id`, an
 * unknown session is 404, anything else without one is 400. The servers differ only in their tools and in
 * what they check or record before a request reaches here.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

export class McpSessions {
  private readonly sessions = new Map<string, StreamableHTTPServerTransport>();

  /** `build` makes the server of a new session. */
  constructor(private readonly build: () => McpServer) {}

  async handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const sessionId = req.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? this.sessions.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId !== undefined || req.method !== 'POST' || !isInitializeRequest(body)) {
        res.writeHead(sessionId !== undefined ? 404 : 400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'no such session' }, id: null }));
        return;
      }
      const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void this.sessions.set(id, created) });
      created.onclose = () => {
        if (created.sessionId) this.sessions.delete(created.sessionId);
      };
      await this.build().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, body);
  }

  async close(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((transport) => transport.close().catch(() => undefined)));
  }
}

/** A request's JSON body, or undefined when it has none or it is not JSON. */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
