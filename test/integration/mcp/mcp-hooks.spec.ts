/**
 * E2 MCP hooks end to end: the tools room's MCP client (SDK Streamable HTTP) against REAL MCP servers built
 * with the SDK on loopback, each requiring `Authorization: Bearer <token>` on every request. An
 * `@OnHook('before_mcp_request')` provider adds the header for chosen server ids only.
 */
import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { AgentHooksModule, HookFailedError, HookInvocation, McpRequestContext, McpResponseContext, OnHook, RunContext } from '../../../src/index.js';
import { McpServersService } from '../../../src/runtime/tools/mcp-servers.service.js';
import { ToolCatalogService } from '../../../src/runtime/tools/tool-catalog.service.js';
import { ToolError, type ToolDefinition, type ToolInvocation } from '../../../src/runtime/tools/tool-types.js';
import { MCP_SERVERS, TOOLS_OPTIONS } from '../../../src/runtime/tools/tools.options.js';
import { closedPort, startMcpServer, UNAUTHORIZED_BODY, type TestMcpServer } from './mcp-test-server.js';
import { eventually } from '../../support/eventually.js';

const TOKEN = 'mcp-test-token-8c1f';

interface SeenMcpRequest {
  serverId: string;
  method: string;
  url: string;
  headersIn: Record<string, string>;
  runId?: string;
}

interface SeenMcpResponse {
  serverId: string;
  statusCode: number;
  latencyMs: number;
  keys: string[];
  runId?: string;
}

/** Adds the bearer token for `kb` and `later` only; `open` stays unauthenticated. */
@Injectable()
class McpAuthHooks {
  readonly requests: SeenMcpRequest[] = [];
  readonly responses: SeenMcpResponse[] = [];
  /** A method the hook withholds the header from (to provoke a 401 mid-session). */
  withholdFor?: string;
  /** A method for which the hook fails (failure_policy fail) on server kb. */
  failFor?: string;

  @OnHook('before_mcp_request')
  inject(invocation: HookInvocation): McpRequestContext | undefined {
    const request = invocation.payloadAs(McpRequestContext);
    this.requests.push({
      serverId: request.serverId,
      method: request.method,
      url: request.url,
      headersIn: { ...request.headers },
      ...(invocation.runContext ? { runId: invocation.runContext.runId } : {}),
    });
    if (request.serverId === 'guarded' || (request.serverId === 'kb' && request.method === this.failFor)) {
      throw new Error('token vault is sealed');
    }
    if (request.serverId !== 'kb' && request.serverId !== 'later') return undefined;
    if (request.method === this.withholdFor) return undefined;
    return request.withHeaders({ Authorization: `Bearer ${TOKEN}` });
  }

  @OnHook('after_mcp_response')
  observe(invocation: HookInvocation): void {
    const response = invocation.payloadAs(McpResponseContext);
    this.responses.push({
      serverId: response.serverId,
      statusCode: response.statusCode,
      latencyMs: response.latencyMs,
      keys: Object.keys(response),
      ...(invocation.runContext ? { runId: invocation.runContext.runId } : {}),
    });
  }

  methodsFor(serverId: string): string[] {
    return this.requests.filter((r) => r.serverId === serverId).map((r) => r.method);
  }
}

let kb: TestMcpServer;
let open: TestMcpServer;
let guarded: TestMcpServer;
let later: TestMcpServer | undefined;
let laterPort: number;
let moduleRef: TestingModule;
let moduleClosed = false;
let catalog: ToolCatalogService;
let hooks: McpAuthHooks;

beforeAll(async () => {
  [kb, open, guarded] = await Promise.all([startMcpServer(TOKEN), startMcpServer(TOKEN), startMcpServer(TOKEN)]);
  laterPort = await closedPort();
  moduleRef = await Test.createTestingModule({ imports: [AgentHooksModule.forRoot({ configFile: false })], providers: [McpAuthHooks] })
    .overrideProvider(TOOLS_OPTIONS)
    .useValue({ defaultTimeoutMs: 5_000, mcpConnectTimeoutMs: 2_000 })
    .overrideProvider(MCP_SERVERS)
    .useValue({
      kb: { url: kb.url },
      open: { url: open.url },
      guarded: { url: guarded.url },
      later: { url: `http://127.0.0.1:${laterPort}/mcp` },
    })
    .compile();
  // An unreachable server (`later`) never stops the start.
  await moduleRef.init();
  catalog = moduleRef.get(ToolCatalogService);
  hooks = moduleRef.get(McpAuthHooks);
});

afterAll(async () => {
  if (!moduleClosed) await moduleRef.close();
  await Promise.all([kb, open, guarded, later].map(async (server) => server?.close()));
});

function invocation(runId?: string, signal: AbortSignal = new AbortController().signal): ToolInvocation {
  return { operationId: runId ?? 'op-x', toolCallId: `call-${Math.random()}`, idempotencyKey: 'key-x', signal, ...(runId ? { runContext: new RunContext({ runId }) } : {}) };
}

async function find(identifier: string, apiName: string): Promise<ToolDefinition> {
  const tool = await catalog.find(identifier, apiName);
  if (!tool) throw new Error(`no tool ${identifier}/${apiName}`);
  return tool;
}

async function failure(promise: Promise<unknown>): Promise<ToolError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ToolError);
  return error as ToolError;
}


describe('MCP tools with before_mcp_request auth (E2, DESIGN §8)', () => {
  it('lists the server tools as identifier = server id, apiName = tool name, parameters = inputSchema', async () => {
    const tools = await catalog.toolsFor(['mcp:kb']);
    expect(tools.map((t) => `${t.identifier}/${t.apiName}`)).toEqual(['kb/echo', 'kb/add', 'kb/fail']);
    const echo = tools[0]!;
    expect(echo).toMatchObject({ source: 'mcp', serverId: 'kb', description: 'Echoes text', requiresApproval: false, deferred: false });
    expect(echo.parameters).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    // globs reach MCP tools too (T5: one event path)
    expect((await catalog.toolsFor(['kb/e*'])).map((t) => t.apiName)).toEqual(['echo']);
  });

  it('initialize, notifications/initialized, tools/list and tools/call all pass through the hook and succeed', async () => {
    const result = await catalog.execute(await find('kb', 'echo'), { text: 'hello' }, invocation('run-1'));
    expect(result).toMatchObject({ content: 'echo: hello', success: true, data: { content: [{ type: 'text', text: 'echo: hello' }] } });

    const methods = hooks.methodsFor('kb');
    expect(methods).toEqual(expect.arrayContaining(['initialize', 'notifications/initialized', 'tools/list', 'tools/call']));
    expect(methods.indexOf('initialize')).toBeLessThan(methods.indexOf('notifications/initialized'));
    // every request starts with empty headers; the url is the server's
    for (const request of hooks.requests.filter((r) => r.serverId === 'kb')) {
      expect(request.headersIn).toEqual({});
      expect(request.url).toBe(kb.url);
    }
    // the connection was opened in the background, outside any run; the call carries its run
    expect(hooks.requests.find((r) => r.serverId === 'kb' && r.method === 'initialize')!.runId).toBeUndefined();
    expect(hooks.requests.filter((r) => r.serverId === 'kb' && r.method === 'tools/call').at(-1)!.runId).toBe('run-1');
    // the server saw nothing unauthenticated
    expect(kb.seen.length).toBeGreaterThanOrEqual(4);
    expect(kb.seen.every((request) => request.authorized)).toBe(true);
    expect(kb.seen.flatMap((request) => request.rpcMethods)).toEqual(expect.arrayContaining(['initialize', 'notifications/initialized', 'tools/list', 'tools/call']));
  });

  it('the event stream GET goes through the hooks too', async () => {
    await eventually(() => hooks.methodsFor('kb').includes('GET'), 'the GET of kb to be recorded');
    expect(kb.seen.some((request) => request.httpMethod === 'GET' && request.authorized)).toBe(true);
  });

  it('after_mcp_response sees status codes and latencies, never a body, inside and outside a run', async () => {
    const kbResponses = hooks.responses.filter((r) => r.serverId === 'kb');
    expect(kbResponses.length).toBeGreaterThanOrEqual(4);
    expect(kbResponses.map((r) => r.statusCode)).toEqual(expect.arrayContaining([200, 202]));
    for (const response of kbResponses) {
      expect(response.keys.sort()).toEqual(['latencyMs', 'serverId', 'statusCode', 'url']);
      expect(Number.isFinite(response.latencyMs) && response.latencyMs >= 0).toBe(true);
    }
    expect(kbResponses.some((r) => r.runId === undefined)).toBe(true);
    expect(kbResponses.some((r) => r.runId === 'run-1')).toBe(true);
  });

  it('structured content is kept in data; isError results are success: false', async () => {
    const sum = await catalog.execute(await find('kb', 'add'), { a: 2, b: 3 }, invocation('run-2'));
    expect(sum).toMatchObject({ content: '5', success: true, data: { structuredContent: { sum: 5 } } });
    const failed = await catalog.execute(await find('kb', 'fail'), {}, invocation('run-2'));
    expect(failed).toMatchObject({ content: 'the knowledge base is read-only', success: false });
  });

  it('arguments are checked against the inputSchema before anything is sent', async () => {
    const callsBefore = kb.seen.filter((r) => r.rpcMethods.includes('tools/call')).length;
    const error = await failure(catalog.execute(await find('kb', 'echo'), { text: 12345 }, invocation('run-3')));
    expect(error.code).toBe('invalid_arguments');
    expect(error.message).toBe('invalid arguments for kb/echo: /text must be string');
    expect(kb.seen.filter((r) => r.rpcMethods.includes('tools/call')).length).toBe(callsBefore);
  });

  it('an unknown tool of a reachable server is not found', async () => {
    expect(await catalog.find('kb', 'nope')).toBeUndefined();
  });
});

describe('MCP servers the hook does not authenticate', () => {
  it('a 401 while connecting → unavailable, with the status named and no body', async () => {
    expect(await catalog.toolsFor(['mcp:open'])).toEqual([]);
    const tool = await find('open', 'echo');
    const error = await failure(catalog.execute(tool, { text: 'hi' }, invocation('run-4')));
    expect(error.code).toBe('unavailable');
    expect(error.message).toBe('MCP server open is unavailable: HTTP 401 while connecting');
    expect(error.message).not.toContain(UNAUTHORIZED_BODY);
    expect(open.seen.length).toBeGreaterThan(0);
    expect(open.seen.every((request) => !request.authorized && request.status === 401)).toBe(true);
    const responses = hooks.responses.filter((r) => r.serverId === 'open');
    expect(responses.length).toBeGreaterThan(0);
    expect(responses.every((r) => r.statusCode === 401)).toBe(true);
    expect(moduleRef.get(McpServersService).state('open')).toBe('unavailable');
  });

  it('a 401 on tools/call in an open session → execution_failed naming the status', async () => {
    hooks.withholdFor = 'tools/call';
    try {
      const error = await failure(catalog.execute(await find('kb', 'echo'), { text: 'x' }, invocation('run-5')));
      expect(error.code).toBe('execution_failed');
      expect(error.message).toBe('MCP server kb answered HTTP 401 to tools/call');
      expect(error.message).not.toContain(UNAUTHORIZED_BODY);
      expect(hooks.responses.filter((r) => r.serverId === 'kb').at(-1)!.statusCode).toBe(401);
    } finally {
      hooks.withholdFor = undefined;
    }
    // the session is intact: the next call works
    expect((await catalog.execute(await find('kb', 'echo'), { text: 'again' }, invocation('run-5'))).content).toBe('echo: again');
  });
});

describe('before_mcp_request failing under failure_policy fail', () => {
  it('aborts the connection: the server sees no request at all, the tool fails with a clear ToolError', async () => {
    const error = await failure(catalog.execute(await find('guarded', 'echo'), { text: 'hi' }, invocation('run-6')));
    expect(error.code).toBe('execution_failed');
    expect(error.errorType).toBe('HookFailedError');
    expect(error.message).toBe('MCP request initialize to server guarded was not sent: a before_mcp_request hook failed (HookFailedError)');
    // the hook's failure is kept as the cause, so the runtime can apply E6 (fail the operation) if it wants to
    expect(error.cause).toBeInstanceOf(HookFailedError);
    expect((error.cause as HookFailedError).point).toBe('before_mcp_request');
    expect(hooks.methodsFor('guarded')).toContain('initialize');
    expect(guarded.seen).toEqual([]);
  });

  it('aborts a tools/call of an open session: the call is never sent', async () => {
    await catalog.execute(await find('kb', 'echo'), { text: 'warm' }, invocation('run-7'));
    const callsBefore = kb.seen.filter((r) => r.rpcMethods.includes('tools/call')).length;
    hooks.failFor = 'tools/call';
    try {
      const error = await failure(catalog.execute(await find('kb', 'echo'), { text: 'secret' }, invocation('run-7')));
      expect(error.code).toBe('execution_failed');
      expect(error.errorType).toBe('HookFailedError');
      expect(error.message).toContain('tools/call');
    } finally {
      hooks.failFor = undefined;
    }
    expect(kb.seen.filter((r) => r.rpcMethods.includes('tools/call')).length).toBe(callsBefore);
  });
});

describe('an unreachable MCP server', () => {
  it('did not stop the start; its tools answer unavailable', async () => {
    const servers = moduleRef.get(McpServersService);
    expect(await catalog.toolsFor(['mcp:later'])).toEqual([]);
    const tool = await find('later', 'echo');
    expect(tool).toMatchObject({ identifier: 'later', apiName: 'echo', source: 'mcp', serverId: 'later' });
    const error = await failure(catalog.execute(tool, { text: 'hi' }, invocation('run-8')));
    expect(error.code).toBe('unavailable');
    expect(error.message).toBe('MCP server later is unreachable');
    expect(servers.state('later')).toBe('unavailable');
    // nothing answered, so no after_mcp_response was fired for it
    expect(hooks.responses.filter((r) => r.serverId === 'later')).toEqual([]);
  });

  it('is retried on next use and works once it is back', async () => {
    later = await startMcpServer(TOKEN, laterPort);
    const result = await catalog.execute(await find('later', 'echo'), { text: 'back' }, invocation('run-9'));
    expect(result).toMatchObject({ content: 'echo: back', success: true });
    expect(moduleRef.get(McpServersService).state('later')).toBe('ready');
  });
});

describe('closing the app', () => {
  it('ends each MCP session with a DELETE that also passes through the hooks', async () => {
    const deletesBefore = kb.seen.filter((r) => r.httpMethod === 'DELETE').length;
    await moduleRef.close();
    moduleClosed = true;
    expect(hooks.methodsFor('kb')).toContain('DELETE');
    const deletes = kb.seen.filter((r) => r.httpMethod === 'DELETE');
    expect(deletes.length).toBe(deletesBefore + 1);
    expect(deletes.at(-1)).toMatchObject({ authorized: true, status: 200 });
  });
});
