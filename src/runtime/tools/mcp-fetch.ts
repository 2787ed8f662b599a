/**
 * The `fetch` the MCP client transport uses for EVERY HTTP request it makes (initialize, notifications,
 * tools/list, tools/call, the GET event stream, the session DELETE). Around each request it fires the MCP
 * hooks of SPEC E2:
 * - `before_mcp_request` with `McpRequestContext { serverId, url, method, headers: {} }`; the headers of the
 *   context the chain returns are set on the request (e.g. `Authorization`). A hook failing under
 *   `failure_policy: fail` aborts the request: it is never sent without the headers the hook would add.
 * - `after_mcp_response` with `McpResponseContext { serverId, url, statusCode, latencyMs }` for every
 *   response, success or error status; the body is never read here.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { RunContext } from '../../hooks/contexts.js';
import { McpRequestContext, McpResponseContext } from '../../hooks/contexts.js';
import type { HookDispatcher } from '../../hooks/hook-dispatcher.js';
import { IDEMPOTENCY_KEY_HEADER, MCP_IDEMPOTENCY_META_KEY } from './idempotency-key.js';
import { McpHookAbortError, McpUnreachableError } from './mcp-errors.js';
import type { AgentTracer } from '../../tracing/agent-tracer.js';

export interface HookedFetchOptions {
  serverId: string;
  dispatcher: HookDispatcher;
  /** The run on whose behalf the request is made, if any (hooks also fire outside a run). */
  runContext: () => RunContext | undefined;
  /** The underlying fetch; the global one by default. */
  fetch?: FetchLike;
  /** SPEC O1, O2: the request as a client span, its `traceparent` sent. */
  tracer?: AgentTracer;
}

export function createHookedFetch(options: HookedFetchOptions): FetchLike {
  const { serverId, dispatcher } = options;
  const base = options.fetch ?? fetch;
  return async (input, init) => {
    const url = String(input);
    const method = mcpMethodOf(init?.method ?? 'GET', init?.body);
    const runContext = options.runContext();
    const dispatchOptions = runContext ? { runContext } : {};

    let request: McpRequestContext;
    try {
      request = await dispatcher.transform('before_mcp_request', new McpRequestContext({ serverId, url, method, headers: {} }), dispatchOptions);
    } catch (error) {
      throw new McpHookAbortError(serverId, method, 'before_mcp_request', error);
    }
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(request.headers)) headers.set(name, value);
    // F1: the call's key as a header too, taken from the very request's `_meta` (set last: it is the call's own).
    if (method === 'tools/call') {
      const key = idempotencyKeyOf(init?.body);
      if (key !== undefined) headers.set(IDEMPOTENCY_KEY_HEADER, key);
    }

    const started = performance.now();
    let response: Response;
    try {
      response = await traced(options.tracer, serverId, url, method, init?.method ?? 'GET', headers, () => base(input, { ...init, headers }));
    } catch (error) {
      // A request aborted by the client (close, cancellation) is not an unreachable server.
      if (init?.signal?.aborted) throw error;
      throw new McpUnreachableError(serverId, error);
    }
    const latencyMs = performance.now() - started;

    try {
      await dispatcher.dispatch('after_mcp_response', new McpResponseContext({ serverId, url, statusCode: response.status, latencyMs }), dispatchOptions);
    } catch (error) {
      await response.body?.cancel().catch(() => undefined);
      throw new McpHookAbortError(serverId, method, 'after_mcp_response', error);
    }
    return response;
  };
}

/**
 * The request as a client span (`<mcp method> mcp:<server>`): the server's address, never the URL's path
 * or query, nor a header (O4). The span's context goes out as `traceparent` (O2).
 */
function traced(
  tracer: AgentTracer | undefined,
  serverId: string,
  url: string,
  mcpMethod: string,
  httpMethod: string,
  headers: Headers,
  send: () => Promise<Response>,
): Promise<Response> {
  // Outside an operation (a background connect, a tools list): no trace of its own to start.
  if (!tracer?.inTrace) return send();
  // Built only when a span is started (an SDK is registered).
  const attributes = () => {
    const target = new URL(url);
    return {
      'mcp.method.name': mcpMethod,
      'nest_agent_hooks.mcp.server': serverId,
      'http.request.method': httpMethod.toUpperCase(),
      'server.address': target.hostname,
      ...(target.port ? { 'server.port': Number(target.port) } : {}),
    };
  };
  return tracer.span(`${mcpMethod} mcp:${serverId}`, 'client', attributes, async (span) => {
    const carrier: Record<string, string> = {};
    tracer.inject(carrier);
    for (const [name, value] of Object.entries(carrier)) headers.set(name, value);
    const response = await send();
    span.set({ 'http.response.status_code': response.status });
    if (response.status >= 400) span.fail(String(response.status));
    return response;
  });
}

/** One leading `"method"` key, as the SDK serializes requests and notifications: no full parse needed. */
const LEADING_METHOD = /^\{"method":"([^"\\]+)"/;

/**
 * The MCP method of a request: the JSON-RPC method of a POSTed message (`initialize`, `tools/call`,
 * `notifications/initialized`; a batch joins its methods with `,`), else the HTTP method (`GET`, `DELETE`,
 * or `POST` for a reply to a server request).
 */
export function mcpMethodOf(httpMethod: string, body: unknown): string {
  const verb = httpMethod.toUpperCase();
  if (verb !== 'POST' || typeof body !== 'string') return verb;
  const fast = LEADING_METHOD.exec(body);
  if (fast) return fast[1]!;
  try {
    const parsed = JSON.parse(body) as unknown;
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    const methods = messages.map((message) => (message as { method?: unknown } | null)?.method).filter((m): m is string => typeof m === 'string');
    return methods.length > 0 ? methods.join(',') : verb;
  } catch {
    return verb;
  }
}

/** The idempotency key in a `tools/call` body's `params._meta` (F1), or undefined. */
function idempotencyKeyOf(body: unknown): string | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const parsed = JSON.parse(body) as { params?: { _meta?: Record<string, unknown> } } | null;
    const key = parsed?.params?._meta?.[MCP_IDEMPOTENCY_META_KEY];
    return typeof key === 'string' ? key : undefined;
  } catch {
    return undefined;
  }
}
