/**
 * One configured MCP server, spoken to with the SDK's Streamable HTTP client through the hooked fetch
 * (mcp-fetch.ts). Connection is lazy and shared: concurrent users wait for the same attempt. A failed
 * attempt leaves the server `unavailable` and the next use tries again; a server that vanishes mid-session
 * (unreachable, or its session gone after a restart) is dropped and reconnected on next use.
 */
import type { AgentTracer } from '../../tracing/agent-tracer.js';
import type { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { RunContext } from '../../hooks/contexts.js';
import type { HookDispatcher } from '../../hooks/hook-dispatcher.js';
import { MCP_IDEMPOTENCY_META_KEY } from './idempotency-key.js';
import { McpUnreachableError, toToolError } from './mcp-errors.js';
import { createHookedFetch } from './mcp-fetch.js';
import type { McpCallResult } from './mcp-result.js';
import { ToolError } from './tool-types.js';

export type McpServerState = 'idle' | 'connecting' | 'ready' | 'unavailable' | 'closed';

export interface McpServerConnectionOptions {
  serverId: string;
  url: URL;
  dispatcher: HookDispatcher;
  /** Carries the run a request is made for into the hooked fetch (one store per service, no static state). */
  runContexts: AsyncLocalStorage<RunContext | undefined>;
  /** Bound on the `initialize` request. */
  connectTimeoutMs: number;
  logger: Logger;
  /** The underlying fetch; the global one by default. */
  fetch?: FetchLike;
  tracer?: AgentTracer;
}

export interface McpCallOptions {
  signal: AbortSignal;
  timeoutMs: number;
  /** F1: sent in the request's `_meta`; the hooked fetch also sets it as the `Idempotency-Key` header. */
  idempotencyKey?: string;
  runContext?: RunContext;
}

interface Session {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
  /** The server's tools, listed once per session and again after `notifications/tools/list_changed`. */
  tools?: Promise<readonly McpTool[]>;
}

const CLIENT_INFO = { name: 'nest-agent-hooks', version: '0.1.0' };

export class McpServerConnection {
  readonly serverId: string;
  private session?: Session;
  private connecting?: Promise<Session>;
  /** The client of the attempt in progress, so `close()` can abort it. */
  private pending?: Client;
  private current: McpServerState = 'idle';
  private readonly hookedFetch: FetchLike;

  constructor(private readonly options: McpServerConnectionOptions) {
    this.serverId = options.serverId;
    this.hookedFetch = createHookedFetch({
      serverId: options.serverId,
      dispatcher: options.dispatcher,
      runContext: () => options.runContexts.getStore(),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.tracer ? { tracer: options.tracer } : {}),
    });
  }

  get state(): McpServerState {
    return this.current;
  }

  /**
   * The open session, connecting first if needed. Requests of a connection opened for a run carry that run's
   * context to the hooks; a background connection carries none.
   */
  connect(runContext?: RunContext): Promise<Session> {
    if (this.current === 'closed') return Promise.reject(new ToolError('unavailable', `MCP server ${this.serverId} is closed`));
    if (this.session) return Promise.resolve(this.session);
    if (!this.connecting) {
      this.connecting = this.open(runContext).finally(() => {
        this.connecting = undefined;
      });
    }
    return this.connecting;
  }

  /** The server's tools (cached per session). Throws `ToolError` (`unavailable`, …). */
  async tools(runContext?: RunContext): Promise<readonly McpTool[]> {
    const session = await this.connect(runContext);
    if (!session.tools) {
      const listing = this.within(runContext, () => this.listAll(session));
      session.tools = listing;
      // A failed listing is not cached: the next use asks again.
      listing.catch(() => {
        if (session.tools === listing) session.tools = undefined;
      });
    }
    try {
      return await session.tools;
    } catch (error) {
      this.afterFailure(session, error);
      throw toToolError(this.serverId, 'list', error);
    }
  }

  /** Calls a tool; throws `ToolError`. A session the server no longer knows (404) is reopened once. */
  async callTool(name: string, args: Record<string, unknown>, options: McpCallOptions): Promise<McpCallResult> {
    const request = {
      name,
      arguments: args,
      ...(options.idempotencyKey !== undefined ? { _meta: { [MCP_IDEMPOTENCY_META_KEY]: options.idempotencyKey } } : {}),
    };
    for (let attempt = 0; ; attempt++) {
      const session = await this.connect(options.runContext);
      try {
        return (await this.within(options.runContext, () =>
          session.client.callTool(request, undefined, { signal: options.signal, timeout: options.timeoutMs }),
        )) as McpCallResult;
      } catch (error) {
        this.afterFailure(session, error);
        // 404 on a session means the server never saw the call (e.g. it restarted): safe to send it again.
        if (attempt === 0 && sessionLost(error) && !options.signal.aborted) continue;
        throw toToolError(this.serverId, 'call', error);
      }
    }
  }

  /** Ends the session (HTTP DELETE, through the hooks) and stops for good. */
  async close(): Promise<void> {
    this.current = 'closed';
    if (this.pending) await this.pending.close().catch(() => undefined);
    if (this.connecting) await this.connecting.catch(() => undefined);
    const session = this.session;
    this.session = undefined;
    if (session) await this.end(session);
  }

  private async open(runContext: RunContext | undefined): Promise<Session> {
    this.current = 'connecting';
    const transport = new StreamableHTTPClientTransport(this.options.url, { fetch: this.hookedFetch });
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    // Errors of the background event stream surface again on the next request; nothing to do with them here.
    client.onerror = () => undefined;
    this.pending = client;
    try {
      await this.within(runContext, () => client.connect(transport, { timeout: this.options.connectTimeoutMs }));
    } catch (error) {
      await client.close().catch(() => undefined);
      const failure = toToolError(this.serverId, 'connect', error);
      if (!this.isClosed()) {
        this.current = 'unavailable';
        this.options.logger.warn(`${failure.message} (${failure.errorType}); its tools answer with an error until it is back`);
      }
      throw failure;
    } finally {
      this.pending = undefined;
    }
    const session: Session = { client, transport };
    // `close()` may have run while we were connecting.
    if (this.isClosed()) {
      await this.end(session);
      throw new ToolError('unavailable', `MCP server ${this.serverId} is closed`);
    }
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      session.tools = undefined;
    });
    client.onclose = () => {
      if (this.session === session) this.session = undefined;
    };
    this.session = session;
    this.current = 'ready';
    return session;
  }

  private async listAll(session: Session): Promise<readonly McpTool[]> {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await session.client.listTools(cursor ? { cursor } : undefined, { timeout: this.options.connectTimeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  /** Drops a session whose server is gone or no longer knows it; the next use reconnects. */
  private afterFailure(session: Session, error: unknown): void {
    const unreachable = error instanceof McpUnreachableError;
    if (!unreachable && !sessionLost(error)) return;
    if (this.session === session) this.session = undefined;
    if (this.current !== 'closed') this.current = unreachable ? 'unavailable' : 'idle';
    void session.client.close().catch(() => undefined);
  }

  private async end(session: Session): Promise<void> {
    try {
      await this.within(undefined, () => session.transport.terminateSession());
    } catch {
      // Best effort: a server that is gone or refuses the DELETE keeps nothing of ours that matters.
    }
    await session.client.close().catch(() => undefined);
  }

  private isClosed(): boolean {
    return this.current === 'closed';
  }

  private within<T>(runContext: RunContext | undefined, work: () => Promise<T>): Promise<T> {
    return this.options.runContexts.run(runContext, work);
  }
}

function sessionLost(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code === 404;
}
