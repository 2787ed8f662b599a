/**
 * A real MCP server (the SDK's McpServer + StreamableHTTPServerTransport, stateful sessions) on a loopback
 * node:http server that REQUIRES `Authorization: Bearer <token>` on every request (401 otherwise), and
 * records what reached it.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export interface SeenRequest {
  httpMethod: string;
  /** JSON-RPC method(s) of a POST body. */
  rpcMethods: string[];
  authorized: boolean;
  status?: number;
}

export interface TestMcpServer {
  url: string;
  port: number;
  seen: SeenRequest[];
  /** Text the 401 body carries: it must never reach hooks or errors. */
  readonly unauthorizedBody: string;
  /** The `slow` tool (`slowTool: true`): resolves once a call of it reached the server (and is held there). */
  slowCallArrived(): Promise<void>;
  /** Lets every held `slow` call (and later ones) answer `slow: done`. */
  releaseSlow(): void;
  close(): Promise<void>;
}

/** Holds `slow` calls until the test releases them: a condition, not a sleep. */
class SlowGate {
  private arrivedResolve!: () => void;
  readonly arrived = new Promise<void>((resolve) => (this.arrivedResolve = resolve));
  private releaseResolve!: () => void;
  readonly released = new Promise<void>((resolve) => (this.releaseResolve = resolve));
  arrive(): void {
    this.arrivedResolve();
  }
  release(): void {
    this.releaseResolve();
  }
}

export const UNAUTHORIZED_BODY = 'unauthorized-body-marker-5150';

function buildServer(gate: SlowGate, slow: boolean): McpServer {
  const server = new McpServer({ name: 'kb-test', version: '1.0.0' });
  if (slow) server.registerTool('slow', { description: 'Answers once the test releases it', inputSchema: {} }, async () => {
    gate.arrive();
    await gate.released;
    return { content: [{ type: 'text', text: 'slow: done' }] };
  });
  server.registerTool('echo', { description: 'Echoes text', inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: 'text', text: `echo: ${text}` }],
  }));
  server.registerTool(
    'add',
    { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() }, outputSchema: { sum: z.number() } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } }),
  );
  server.registerTool('fail', { description: 'Reports a failure', inputSchema: {} }, async () => ({
    content: [{ type: 'text', text: 'the knowledge base is read-only' }],
    isError: true,
  }));
  return server;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
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

function methodsOf(body: unknown): string[] {
  const messages = Array.isArray(body) ? body : body ? [body] : [];
  return messages.map((m) => (m as { method?: unknown }).method).filter((m): m is string => typeof m === 'string');
}

/** `token: null`: every request is authorized (a server child process that has no hook to add the header). */
export async function startMcpServer(token: string | null, port = 0, options: { slowTool?: boolean } = {}): Promise<TestMcpServer> {
  const seen: SeenRequest[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const gate = new SlowGate();

  const http: Server = createServer((req, res) => {
    void (async () => {
      const body = req.method === 'POST' ? await readBody(req) : undefined;
      const record: SeenRequest = { httpMethod: req.method ?? '?', rpcMethods: methodsOf(body), authorized: token === null || req.headers.authorization === `Bearer ${token}` };
      seen.push(record);
      res.on('finish', () => (record.status = res.statusCode));
      if (!record.authorized) {
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
        res.end(JSON.stringify({ error: UNAUTHORIZED_BODY }));
        return;
      }
      const sessionId = req.headers['mcp-session-id'];
      let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
      if (!transport) {
        if (sessionId !== undefined || req.method !== 'POST' || !isInitializeRequest(body)) {
          res.writeHead(sessionId !== undefined ? 404 : 400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'no such session' }, id: null }));
          return;
        }
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, created);
          },
        });
        created.onclose = () => {
          if (created.sessionId) sessions.delete(created.sessionId);
        };
        await buildServer(gate, options.slowTool === true).connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  const actualPort = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actualPort}/mcp`,
    port: actualPort,
    seen,
    unauthorizedBody: UNAUTHORIZED_BODY,
    slowCallArrived: () => gate.arrived,
    releaseSlow: () => gate.release(),
    async close() {
      gate.release();
      await Promise.all([...sessions.values()].map((t) => t.close().catch(() => undefined)));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** A loopback port with nothing listening (bound, then released). */
export async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
