/**
 * The hardened HTTP client hook webhooks are posted with (W7, W12, DESIGN §4): `undici.request` on a
 * dedicated Agent (never the global dispatcher or `fetch`, so no proxy variables, redirects or retries
 * sneak in), every connection through the SSRF guard, one deadline per request, the caller's signal
 * honoured, and a capped, strictly decoded body for controls. Errors are `WebhookError`s that name the host
 * and never a header value, the request body or the response body.
 */
import { Agent, type Dispatcher } from 'undici';
import { guardedConnector } from './guarded-connector.js';
import { hasContentType, JSON_CONTENT_TYPE } from './json-content-type.js';
import { parseRetryAfter } from '../common/retry-after.js';
import { RequestDeadline } from '../common/request-deadline.js';
import { CONTROL_BODY_LIMIT, readControlBody } from './response-body.js';
import { SsrfGuard } from './ssrf-guard.js';
import { WebhookError } from './webhook-error.js';
import { webhookTarget } from './webhook-target.js';

export interface WebhookHttpClientOptions {
  /** CIDRs reachable in addition to public addresses (private receivers, loopback in tests). */
  allowNetworks?: readonly string[];
  /** Concurrent connections per destination origin; further requests queue (inside their deadline). */
  connectionsPerOrigin?: number;
}

export interface WebhookPostRequest {
  url: string;
  headers: Record<string, string>;
  /** The JSON text, or its UTF-8 bytes (what the sender signed). */
  body: string | Uint8Array;
  /** One deadline for connect, response headers and response body. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** `true` for controls (the body is read and returned), `false` for notifications (it is discarded). */
  expectBody: boolean;
}

export interface WebhookPostResponse {
  status: number;
  body: string | undefined;
}

const DEFAULT_CONNECTIONS_PER_ORIGIN = 32;
/** How many distinct webhook URLs keep their parsed form (a hook posts to the same URL at every send). */
const MAX_TARGETS = 1024;
/** The largest delay `setTimeout` honours; a webhook `timeout` of 2,147,483.647 s lands exactly here. */
const MAX_TIMEOUT_MS = 2_147_483_647;
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** A checked webhook URL in the form the Agent takes: no URL parsing, neither ours nor undici's, per send. */
interface PostTarget {
  readonly host: string;
  readonly origin: string;
  readonly path: string;
}

export class WebhookHttpClient {
  private readonly agent: Agent;
  private readonly targets = new Map<string, PostTarget>();

  constructor(options: WebhookHttpClientOptions = {}) {
    const connections = options.connectionsPerOrigin ?? DEFAULT_CONNECTIONS_PER_ORIGIN;
    if (!Number.isInteger(connections) || connections < 1) {
      throw new WebhookError('configuration', 'connectionsPerOrigin must be a positive integer');
    }
    const guard = new SsrfGuard(options.allowNetworks ?? []);
    this.agent = new Agent({
      connections,
      // The request deadline governs headers and body; undici's own 300 s timers would only cut it short.
      headersTimeout: 0,
      bodyTimeout: 0,
      // undici's 10 s connect timeout stays as a per-socket backstop (reported as `timeout` too).
      connect: guardedConnector(guard),
    });
  }

  async post(req: WebhookPostRequest): Promise<WebhookPostResponse> {
    const { host, origin, path } = this.targetOf(req.url);
    if (!(req.timeoutMs > 0)) throw new WebhookError('configuration', `webhook timeout for ${host} must be a positive number`);
    if (req.signal?.aborted) throw cancelled(host);
    const deadline = new RequestDeadline(Math.min(Math.ceil(req.timeoutMs), MAX_TIMEOUT_MS), req.signal);
    let disposeLater = false;
    try {
      const response = await this.agent.request({
        origin,
        path,
        method: 'POST',
        headers: withJsonType(req.headers),
        body: req.body,
        signal: deadline.signal,
      });
      const { statusCode: status, body } = response;
      if (status < 200 || status > 299) {
        // Never read: a non-2xx body is not a decision, and may be endless.
        discard(body);
        throw httpError(host, status, response.headers['retry-after']);
      }
      if (deadline.cancelled) {
        discard(body);
        throw cancelled(host);
      }
      if (!req.expectBody || status === 204 || status === 205) {
        // Any 2xx acknowledges a notification; the rest of the body drains in the background, bounded by
        // the deadline, so a slow receiver cannot hold up dispatch.
        disposeLater = true;
        void body
          .dump({ limit: CONTROL_BODY_LIMIT })
          .catch(() => undefined)
          .finally(() => deadline.dispose());
        return { status, body: undefined };
      }
      const text = await readControlBody(body, response.headers['content-length'], host);
      // An answer that arrives after the caller gave up is still a cancellation (W12).
      if (deadline.cancelled) throw cancelled(host);
      return { status, body: text };
    } catch (error) {
      throw failure(error, deadline, host);
    } finally {
      if (!disposeLater) deadline.dispose();
    }
  }

  /** `webhookTarget`'s checks, once per URL string; a URL that fails them is checked (and refused) every time. */
  private targetOf(raw: string): PostTarget {
    const known = this.targets.get(raw);
    if (known) return known;
    const url = webhookTarget(raw);
    const target = { host: url.host, origin: url.origin, path: `${url.pathname}${url.search}` };
    // First in, first out: enough to keep a working set of hooks, and bounded whatever the callers send.
    if (this.targets.size >= MAX_TARGETS) this.targets.delete(this.targets.keys().next().value!);
    this.targets.set(raw, target);
    return target;
  }

  /** Closes pooled connections once in-flight requests finish (each is bounded by its deadline). */
  async close(): Promise<void> {
    await this.agent.close();
  }
}

/**
 * Bodies are JSON; a content type the hook configured explicitly is kept. undici only reads the headers it
 * is given, so a set that names its content type (the sender's own, fresh per send) goes without a copy.
 */
function withJsonType(headers: Record<string, string>): Record<string, string> {
  return hasContentType(headers) ? headers : { ...headers, 'content-type': JSON_CONTENT_TYPE };
}

/** Destroying an unread body aborts the request; its abort error has nowhere to go, so it is swallowed. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** Keeps the receiver's `Retry-After` (queued deliveries honour it); never a header value in the message. */
function httpError(host: string, status: number, retryAfter: string | string[] | undefined): WebhookError {
  const detail = status >= 300 && status <= 399 ? ' (redirects are not followed)' : '';
  return new WebhookError('http_error', `webhook receiver at ${host} answered HTTP ${status}${detail}`, status, parseRetryAfter(retryAfter));
}

function cancelled(host: string): WebhookError {
  return new WebhookError('cancelled', `webhook request to ${host} was cancelled`);
}

/**
 * One typed error per failure. Order matters: a caller's cancellation wins over everything (it never grants
 * permission), then errors we raised ourselves, then the deadline, then transport failures. Only the
 * transport's error code is kept, never its message.
 */
function failure(error: unknown, deadline: RequestDeadline, host: string): WebhookError {
  if (deadline.cancelled) return error instanceof WebhookError && error.code === 'cancelled' ? error : cancelled(host);
  if (error instanceof WebhookError) return error;
  if (deadline.timedOut) return new WebhookError('timeout', `webhook request to ${host} timed out after ${deadline.timeoutMs} ms`);
  const code = codeOf(error);
  if (code !== undefined && TIMEOUT_CODES.has(code)) return new WebhookError('timeout', `webhook request to ${host} timed out (${code})`);
  if (code === 'UND_ERR_INVALID_ARG') return new WebhookError('configuration', `webhook request to ${host} has an invalid header or option`);
  return new WebhookError('network_error', `webhook request to ${host} failed${code === undefined ? '' : ` (${code})`}`);
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code) ? code : undefined;
}
