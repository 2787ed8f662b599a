/**
 * The headers of one outgoing webhook, built the same way wherever it is sent from (a direct post, the
 * queue's delivery worker, a QStash publish): header templates resolved at send time from `allowedEnvVars`
 * only (W6), then the Standard Webhooks headers over the exact body with the current time. The
 * `webhook-id` is the caller's, so every attempt of one delivery carries the same id and a receiver can
 * de-duplicate; the timestamp (and so the signature) is fresh per attempt, as the spec expects of a retry.
 */
import type { AgentHooksModuleOptions } from '../agent-hooks.options.js';
import { CheckedTemplates, resolveHeaders } from './header-template.js';
import { WebhookSigner } from './webhook-signer.js';

/** Where the signing secret is read from when no `webhooks.signingSecret` option is given. */
export const SIGNING_SECRET_ENV = 'AGENT_HOOKS_WEBHOOK_SECRET';

export interface OutgoingWebhook {
  readonly url: string;
  /** Templates (`Bearer ${HOOK_TOKEN}`), never resolved values. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly allowedEnvVars?: readonly string[];
  readonly timeoutSeconds: number;
  /** The serialized payload, exactly as posted and signed. */
  readonly body: string;
  /** `webhook-id`: the same on every attempt of one delivery. */
  readonly webhookId: string;
  /** SPEC O2: the W3C trace context of the work that sent it (`traceparent`, `tracestate`), on every attempt. */
  readonly traceContext?: WebhookTraceContext;
}

export interface WebhookTraceContext {
  readonly traceparent: string;
  readonly tracestate?: string;
}

/** The signing secret at use time (S2): the module option, else the environment. */
export function signingSecretOf(options: AgentHooksModuleOptions): () => string | undefined {
  return () => options.webhooks?.signingSecret ?? (process.env[SIGNING_SECRET_ENV] || undefined);
}

export class OutgoingHeaders {
  private readonly checkedTemplates = new CheckedTemplates();
  private signer: { secret: string; signer: WebhookSigner } | undefined;

  constructor(private readonly secret: () => string | undefined) {}

  /**
   * The headers to send now: resolved templates, `webhook-id` and `webhook-timestamp`, and the signature when a secret is set. Errors
   * name the header or variable, never a value. The result holds secrets: it is sent, never stored.
   */
  for(webhook: OutgoingWebhook, nowMs: number = Date.now()): Record<string, string> {
    return this.build(webhook, nowMs, webhook.body);
  }

  /**
   * The headers and the exact bytes to post: the body encoded to UTF-8 once, and that encoding signed, so
   * what is signed is what is sent (HMAC and the HTTP client each encoded the string before).
   */
  request(webhook: OutgoingWebhook, nowMs: number = Date.now()): { headers: Record<string, string>; body: Buffer } {
    const body = Buffer.from(webhook.body, 'utf8');
    return { headers: this.build(webhook, nowMs, body), body };
  }

  private build(webhook: OutgoingWebhook, nowMs: number, signed: string | Uint8Array): Record<string, string> {
    // A fresh object of resolveHeaders' own: the other headers are added to it in place, no copies.
    const headers = resolveHeaders(webhook.headers, webhook.allowedEnvVars, process.env, this.checkedTemplates);
    const signer = this.currentSigner();
    const timestamp = Math.floor(nowMs / 1000);
    if (signer) {
      const signature = signer.headers(webhook.webhookId, timestamp, signed);
      headers['webhook-id'] = signature['webhook-id'];
      headers['webhook-timestamp'] = signature['webhook-timestamp'];
      headers['webhook-signature'] = signature['webhook-signature'];
    } else {
      // Unsigned too: delivery is at least once (G2, G3), and the id is what a receiver de-duplicates on.
      headers['webhook-id'] = webhook.webhookId;
      headers['webhook-timestamp'] = String(timestamp);
    }
    if (webhook.traceContext) {
      headers.traceparent = webhook.traceContext.traceparent;
      if (webhook.traceContext.tracestate !== undefined) headers.tracestate = webhook.traceContext.tracestate;
    }
    return headers;
  }

  /** Rebuilt only when the secret changes, so a rotated secret is used by the next send. */
  private currentSigner(): WebhookSigner | undefined {
    const secret = this.secret();
    if (!secret) return undefined;
    if (this.signer?.secret !== secret) this.signer = { secret, signer: new WebhookSigner(secret) };
    return this.signer.signer;
  }
}
