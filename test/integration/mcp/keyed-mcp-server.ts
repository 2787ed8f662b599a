/**
 * A real MCP server (the SDK's McpServer over Streamable HTTP) that behaves like a payment API: every
 * `tools/call` is recorded with the idempotency key of its `_meta` and of its `Idempotency-Key` header
 * (SPEC F1), and `charge` takes effect once per key however often it is called (F2). `hang` never answers
 * on its own (F3 deadlines); `flaky` answers HTTP 503 to its first `failures` attempts per key (F3 retries).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { McpSessions, readJsonBody } from './mcp-sessions.js';

export const META_KEY = 'nest-agent-hooks/idempotencyKey';

export interface KeyedCall {
  tool: string;
  /** The key in the request's `_meta`. */
  metaKey?: string;
  /** The key in the request's `Idempotency-Key` header. */
  headerKey?: string;
}

export interface KeyedMcpServer {
  url: string;
  port: number;
  readonly calls: KeyedCall[];
  /** `charge` effects by key: a repeated key answers the first result and adds no effect. */
  readonly effects: Map<string, number>;
  /** `hang` calls whose request the client aborted (the server saw the cancellation). */
  readonly hangAborted: string[];
  /** Resolves once `n` `tools/call` requests of `tool` reached the server. */
  callsOf(tool: string, n?: number): Promise<void>;
  close(): Promise<void>;
}

class Arrivals {
  private readonly waiters: { tool: string; n: number; resolve: () => void }[] = [];
  constructor(private readonly calls: KeyedCall[]) {}
  wait(tool: string, n: number): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push({ tool, n, resolve });
      this.check();
    });
  }
  check(): void {
    for (const waiter of this.waiters) if (this.calls.filter((c) => c.tool === waiter.tool).length >= waiter.n) waiter.resolve();
  }
}

export interface KeyedMcpOptions {
  /** `flaky` answers 503 to this many attempts per key before it succeeds (default 2). */
  failures?: number;
  /** `charge` makes its effect on a key's first call, then never answers it (until close). */
  holdFirstCharge?: boolean;
}

export async function startKeyedMcpServer(options: KeyedMcpOptions = {}, port = 0): Promise<KeyedMcpServer> {
  const calls: KeyedCall[] = [];
  const effects = new Map<string, number>();
  const attempts = new Map<string, number>();
  const hangAborted: string[] = [];
  const arrivals = new Arrivals(calls);
  const failures = options.failures ?? 2;
  const pendingHangs = new Set<() => void>();

  /** Records a `tools/call` as it reached the HTTP server: its tool, the key of its `_meta` and of its header. */
  const record = (body: unknown, header: string | string[] | undefined): KeyedCall | undefined => {
    const message = body as { method?: unknown; params?: { name?: unknown; _meta?: Record<string, unknown> } } | undefined;
    if (message?.method !== 'tools/call' || typeof message.params?.name !== 'string') return undefined;
    const call: KeyedCall = { tool: message.params.name };
    const metaKey = message.params._meta?.[META_KEY];
    if (typeof metaKey === 'string') call.metaKey = metaKey;
    if (typeof header === 'string') call.headerKey = header;
    calls.push(call);
    arrivals.check();
    return call;
  };
  const keyOf = (extra: { _meta?: Record<string, unknown> }): string => String(extra._meta?.[META_KEY] ?? '');

  const build = () => {
    const server = new McpServer({ name: 'keyed-test', version: '1.0.0' });
    server.registerTool('charge', { description: 'Charges an amount once per idempotency key', inputSchema: { amount: z.number() } }, async ({ amount }, extra) => {
      const key = keyOf(extra);
      const first = !effects.has(key);
      if (first) effects.set(key, 1);
      // The effect is made; the answer of a key's first call is lost (held until close), as in a crash.
      if (first && options.holdFirstCharge) await new Promise<void>((resolve) => pendingHangs.add(resolve));
      return { content: [{ type: 'text', text: `charged ${amount}` }] };
    });
    server.registerTool('hang', { description: 'Never answers unless cancelled', inputSchema: {} }, async (_args, extra) => {
      const key = keyOf(extra);
      await new Promise<void>((resolve) => {
        const done = () => {
          pendingHangs.delete(done);
          resolve();
        };
        pendingHangs.add(done);
        extra.signal.addEventListener('abort', () => {
          hangAborted.push(key);
          done();
        });
      });
      return { content: [{ type: 'text', text: 'hang: released' }] };
    });
    server.registerTool('flaky', { description: 'Answers once its first attempts per key have failed', inputSchema: {} }, async () => ({
      content: [{ type: 'text', text: 'flaky: ok' }],
    }));
    return server;
  };
  const sessions = new McpSessions(build);
  const http: Server = createServer((req, res) => {
    void (async () => {
      const body = req.method === 'POST' ? await readJsonBody(req) : undefined;
      const call = record(body, req.headers['idempotency-key']);
      if (call?.tool === 'flaky') {
        // The first attempts of a key fail at the HTTP level, as an overloaded server would.
        const attempt = (attempts.get(call.metaKey ?? '') ?? 0) + 1;
        attempts.set(call.metaKey ?? '', attempt);
        if (attempt <= failures) {
          res.writeHead(503, { 'content-type': 'text/plain' });
          res.end('overloaded');
          return;
        }
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
    calls,
    effects,
    hangAborted,
    callsOf: (tool, n = 1) => arrivals.wait(tool, n),
    async close() {
      for (const release of [...pendingHangs]) release();
      await sessions.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
