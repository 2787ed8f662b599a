/**
 * Engine-family context classes (DESIGN §6, SPEC E2, E8, E9). Immutable value objects: copy helpers
 * (`replace`, `withResult`, `withHeaders`) return new instances; observe-only contexts carry safe metadata
 * only (no arguments, no result bodies).
 */
import { stampBrands } from './context-brand.js';

type Metadata = Readonly<Record<string, unknown>>;

const INSPECT = Symbol.for('nodejs.util.inspect.custom');
const REDACTED = '[REDACTED]';

function frozenCopy<T extends object>(value: T | undefined): Readonly<T> {
  return Object.freeze({ ...(value ?? ({} as T)) });
}

export class EngineContext {
  static readonly brand = 'EngineContext';
  readonly systemName: string;
  readonly metadata: Metadata;

  constructor(init: { systemName: string; metadata?: Record<string, unknown> }) {
    this.systemName = init.systemName;
    this.metadata = frozenCopy(init.metadata);
    stampBrands(this, [EngineContext.brand]);
    Object.freeze(this);
  }
}

/**
 * The caller's credentials (E8). The token lives in a private field, so it never shows in
 * `toString`, `util.inspect`, `JSON.stringify` or object spreading.
 */
export class AuthContext {
  static readonly brand = 'AuthContext';
  readonly #inboundAccessToken: string | undefined;
  readonly scopes: readonly string[];

  constructor(init: { inboundAccessToken?: string; scopes?: readonly string[] } = {}) {
    this.#inboundAccessToken = init.inboundAccessToken;
    this.scopes = Object.freeze([...(init.scopes ?? [])]);
    stampBrands(this, [AuthContext.brand]);
    Object.freeze(this);
  }

  get inboundAccessToken(): string | undefined {
    return this.#inboundAccessToken;
  }

  /** A copy without the token, e.g. for persistence (DESIGN §5: the token is never stored). */
  withoutToken(): AuthContext {
    return new AuthContext({ scopes: this.scopes });
  }

  toString(): string {
    return `AuthContext(scopes=[${this.scopes.join(', ')}], inboundAccessToken=${this.#inboundAccessToken ? REDACTED : 'none'})`;
  }

  toJSON(): { scopes: readonly string[]; inboundAccessToken?: string } {
    return this.#inboundAccessToken ? { scopes: this.scopes, inboundAccessToken: REDACTED } : { scopes: this.scopes };
  }

  [INSPECT](): string {
    return this.toString();
  }
}

export interface RunContextInit {
  runId: string;
  userId?: string;
  organizationId?: string;
  authContext?: AuthContext;
  metadata?: Record<string, unknown>;
}

export type RunContextPatch = Partial<Omit<RunContextInit, 'runId'>>;

/** Per-request identity (E8). `replace` returns a copy and never changes `runId`. */
export class RunContext {
  static readonly brand = 'RunContext';
  readonly runId: string;
  readonly userId?: string;
  readonly organizationId?: string;
  readonly authContext?: AuthContext;
  readonly metadata: Metadata;

  constructor(init: RunContextInit) {
    this.runId = init.runId;
    if (init.userId !== undefined) this.userId = init.userId;
    if (init.organizationId !== undefined) this.organizationId = init.organizationId;
    if (init.authContext !== undefined) this.authContext = init.authContext;
    this.metadata = frozenCopy(init.metadata);
    stampBrands(this, [RunContext.brand]);
    Object.freeze(this);
  }

  /** A copy with `patch` applied; a `runId` in the patch is ignored (the run's identity is fixed). */
  replace(patch: RunContextPatch & { runId?: unknown }): RunContext {
    const { runId: _ignored, ...rest } = patch;
    void _ignored;
    return new RunContext({
      runId: this.runId,
      userId: this.userId,
      organizationId: this.organizationId,
      authContext: this.authContext,
      metadata: { ...this.metadata },
      ...rest,
    } as RunContextInit);
  }
}

/** Safe summary of a finished run; no answer text (E2). */
export class RunEndContext {
  static readonly brand = 'RunEndContext';
  readonly runId: string;
  readonly status: string;
  readonly durationMs: number;
  readonly steps: number;
  readonly toolCalls: number;

  constructor(init: { runId: string; status: string; durationMs: number; steps: number; toolCalls: number }) {
    this.runId = init.runId;
    this.status = init.status;
    this.durationMs = init.durationMs;
    this.steps = init.steps;
    this.toolCalls = init.toolCalls;
    stampBrands(this, [RunEndContext.brand]);
    Object.freeze(this);
  }
}

export interface ToolRequestInit {
  runId: string;
  toolCallId: string;
  identifier: string;
  apiName: string;
  toolName?: string;
  provider: string;
  /** SPEC F1: the call's idempotency key; the runtime always sets it (a hand-built context may leave it out). */
  idempotencyKey?: string;
}

/** A pending tool call, without its arguments (E2, E9). */
export class ToolRequestContext {
  static readonly brand: string = 'ToolRequestContext';
  readonly runId: string;
  readonly toolCallId: string;
  readonly identifier: string;
  readonly apiName: string;
  /** `identifier/apiName`, the string matchers test. */
  readonly toolName: string;
  /** `local`, `mcp:<serverId>`, `agent`, … */
  readonly provider: string;
  /**
   * SPEC F1: the same key the tool receives (an MCP server's `Idempotency-Key`), stable over attempts, re-runs
   * and processes; an opaque hash, safe metadata (E9). Own key only when set.
   */
  declare readonly idempotencyKey?: string;

  constructor(init: ToolRequestInit) {
    this.runId = init.runId;
    this.toolCallId = init.toolCallId;
    this.identifier = init.identifier;
    this.apiName = init.apiName;
    this.toolName = init.toolName ?? `${init.identifier}/${init.apiName}`;
    this.provider = init.provider;
    if (init.idempotencyKey !== undefined) this.idempotencyKey = init.idempotencyKey;
    // Subclasses stamp and freeze once their own fields are set.
    if (new.target === ToolRequestContext) {
      stampBrands(this, [ToolRequestContext.brand]);
      Object.freeze(this);
    }
  }

  protected requestInit(): ToolRequestInit {
    return {
      runId: this.runId,
      toolCallId: this.toolCallId,
      identifier: this.identifier,
      apiName: this.apiName,
      toolName: this.toolName,
      provider: this.provider,
      ...(this.idempotencyKey !== undefined ? { idempotencyKey: this.idempotencyKey } : {}),
    };
  }
}

/** A finished tool call: safe metadata only, with a sanitized error type (E2, E9). */
export class ToolCallContext extends ToolRequestContext {
  static override readonly brand: string = 'ToolCallContext';
  readonly status: 'ok' | 'error';
  readonly latencyMs: number;
  readonly error?: { readonly type: string };
  /** `on_tool_error` only: another attempt of the call follows this failed one (SPEC F3). Own key only when set. */
  declare readonly willRetry?: boolean;

  constructor(init: ToolRequestInit & { status: 'ok' | 'error'; latencyMs: number; error?: { type: string }; willRetry?: boolean }) {
    super(init);
    this.status = init.status;
    this.latencyMs = init.latencyMs;
    if (init.error) this.error = Object.freeze({ type: init.error.type });
    if (init.willRetry !== undefined) this.willRetry = init.willRetry;
    stampBrands(this, [ToolCallContext.brand, ToolRequestContext.brand]);
    Object.freeze(this);
  }
}

/** The one engine context holding result text; `transform_tool_result` must return one (E2). */
export class ToolResultContext extends ToolRequestContext {
  static override readonly brand: string = 'ToolResultContext';
  readonly result: string;

  constructor(init: ToolRequestInit & { result: string }) {
    super(init);
    this.result = init.result;
    stampBrands(this, [ToolResultContext.brand, ToolRequestContext.brand]);
    Object.freeze(this);
  }

  withResult(result: string): ToolResultContext {
    return new ToolResultContext({ ...this.requestInit(), result });
  }

  /** Result text is never shown by inspection (S1: trusted code must not log it by accident). */
  [INSPECT](): string {
    return `ToolResultContext(${this.toolName}, toolCallId=${this.toolCallId}, result=<${this.result.length} chars>)`;
  }
}

/** An outgoing MCP HTTP request; hooks may add headers (E2). */
export class McpRequestContext {
  static readonly brand = 'McpRequestContext';
  readonly serverId: string;
  readonly url: string;
  /** The JSON-RPC method of a POST (`initialize`, `tools/list`, `tools/call`, …), else the HTTP method (`GET`, `DELETE`). */
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;

  constructor(init: { serverId: string; url: string; method: string; headers?: Record<string, string> }) {
    this.serverId = init.serverId;
    this.url = init.url;
    this.method = init.method;
    this.headers = frozenCopy(init.headers);
    stampBrands(this, [McpRequestContext.brand]);
    Object.freeze(this);
  }

  /** A copy with `headers` merged over the current ones. */
  withHeaders(headers: Record<string, string>): McpRequestContext {
    return new McpRequestContext({ serverId: this.serverId, url: this.url, method: this.method, headers: { ...this.headers, ...headers } });
  }

  /** Header values (auth) never show by inspection or serialization (S1). */
  toJSON(): object {
    return { serverId: this.serverId, url: this.url, method: this.method, headers: Object.keys(this.headers) };
  }

  [INSPECT](): string {
    return `McpRequestContext(${this.serverId}, ${this.method}, headers=[${Object.keys(this.headers).join(', ')}])`;
  }
}

/** An MCP HTTP response: status and latency, never the body (E2). */
export class McpResponseContext {
  static readonly brand = 'McpResponseContext';
  readonly serverId: string;
  readonly url: string;
  readonly statusCode: number;
  readonly latencyMs: number;

  constructor(init: { serverId: string; url: string; statusCode: number; latencyMs: number }) {
    this.serverId = init.serverId;
    this.url = init.url;
    this.statusCode = init.statusCode;
    this.latencyMs = init.latencyMs;
    stampBrands(this, [McpResponseContext.brand]);
    Object.freeze(this);
  }
}
