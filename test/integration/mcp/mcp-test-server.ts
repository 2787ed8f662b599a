/**
 * A real MCP server (the SDK's McpServer + StreamableHTTPServerTransport, stateful sessions) on a loopback
 * node:http server that REQUIRES `Authorization: Bearer <token>` on every request (401 otherwise), and
 * records what reached it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { McpSessions, readJsonBody } from './mcp-sessions.js';

export interface SeenRequest {
  httpMethod: string;
  /** JSON-RPC method(s) of a POST body. */
  rpcMethods: string[];
  authorized: boolean;
  status?: number;
  /** The W3C `traceparent` the request carried (SPEC O2). */
  traceparent?: string;
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

function methodsOf(body: unknown): string[] {
  const messages = Array.isArray(body) ? body : body ? [body] : [];
  return messages.map((m) => (m as { method?: unknown }).method).filter((m): m is string => typeof m === 'string');
}

/** `token: null`: every request is authorized (a server child process that has no hook to add the header). */
export async function startMcpServer(token: string | null, port = 0, options: { slowTool?: boolean } = {}): Promise<TestMcpServer> {
  const seen: SeenRequest[] = [];
  const gate = new SlowGate();
  const sessions = new McpSessions(() => buildServer(gate, options.slowTool === true));

  const http: Server = createServer((req, res) => {
    void (async () => {
      const body = req.method === 'POST' ? await readJsonBody(req) : undefined;
      const record: SeenRequest = { httpMethod: req.method ?? '?', rpcMethods: methodsOf(body), authorized: token === null || req.headers.authorization === `Bearer ${token}` };
      if (typeof req.headers.traceparent === 'string') record.traceparent = req.headers.traceparent;
      seen.push(record);
      res.on('finish', () => (record.status = res.statusCode));
      if (!record.authorized) {
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
        res.end(JSON.stringify({ error: UNAUTHORIZED_BODY }));
        return;
      }
      await sessions.handle(req, res, body);
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
      await sessions.close();
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
