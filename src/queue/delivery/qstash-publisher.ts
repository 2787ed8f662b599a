/**
 * `delivery: 'qstash'`: hands a notification to Upstash QStash with the official client, for deployments
 * without Redis (serverless). QStash then posts it to the hook's URL with its own retries and an
 * `Upstash-Signature` the receiver can verify.
 *
 * - `QSTASH_TOKEN` and `QSTASH_URL` are read at every publish (S2); no token is a `configuration` error, so
 *   the caller's fallback applies (D3).
 * - The destination passes the webhook URL checks and the SSRF guard before anything is sent; the QStash
 *   API URL is operator configuration and is not filtered (DESIGN §4).
 * - Header templates are resolved now and given to the client already prefixed `Upstash-Forward-*`
 *   (QStash forwards them; hook headers never reach it under any other name, W4); the Standard Webhooks
 *   headers go along with the same `webhook-id`, which is also QStash's deduplication id. The hook's
 *   timeout becomes `Upstash-Timeout`.
 * - A failed publish is reported by status or error code only: the client's errors carry QStash's response
 *   body, which is never put in a message or a log.
 * - The client's dev-server mode is off (it would download and start a binary) and so is its telemetry;
 *   the client is loaded on first use.
 */
import type { Client } from '@upstash/qstash';
import type { QueuedWebhook } from '../../webhooks/queued-delivery.port.js';
import { OutgoingHeaders } from '../../webhooks/outgoing-headers.js';
import { SsrfGuard } from '../../webhooks/ssrf-guard.js';
import { WebhookError } from '../../webhooks/webhook-error.js';
import { checkRelayedTarget } from '../../webhooks/webhook-target.js';
import type { DeliverySettings } from './delivery-settings.js';
import { withDeadline } from './with-deadline.js';

export const QSTASH_TOKEN_ENV = 'QSTASH_TOKEN';
export const QSTASH_URL_ENV = 'QSTASH_URL';
export const DEFAULT_QSTASH_URL = 'https://qstash.upstash.io';

type QStashSettings = Pick<DeliverySettings, 'allowNetworks' | 'signingSecret' | 'publishTimeoutMs'>;

export class QStashPublisher {
  private readonly guard: SsrfGuard;
  private readonly headers: OutgoingHeaders;
  /** One client per (token, API URL); a rotated token gets a new one. */
  private client: { key: string; client: Client } | undefined;

  constructor(
    private readonly settings: QStashSettings,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.guard = new SsrfGuard(settings.allowNetworks);
    this.headers = new OutgoingHeaders(settings.signingSecret);
  }

  async publish(webhook: QueuedWebhook): Promise<void> {
    const token = this.env[QSTASH_TOKEN_ENV];
    if (!token) throw new WebhookError('configuration', `qstash delivery of hook ${webhook.hookId} needs ${QSTASH_TOKEN_ENV}`);
    const target = await checkRelayedTarget(webhook.url, this.guard);
    const headers = forwarded(this.headers.for(webhook));
    const failed = (reason: string) => new WebhookError('queue_unavailable', `qstash publish of hook ${webhook.hookId} failed (${reason})`);
    try {
      const client = await this.clientFor(token, this.env[QSTASH_URL_ENV] || DEFAULT_QSTASH_URL);
      await withDeadline(
        client.publish({
          url: target.href,
          method: 'POST',
          body: webhook.body,
          headers,
          // QStash takes whole seconds; a sub-second hook timeout becomes one second.
          timeout: Math.max(1, Math.ceil(webhook.timeoutSeconds)),
          deduplicationId: webhook.webhookId,
        }),
        this.settings.publishTimeoutMs,
        () => failed('timeout'),
      );
    } catch (error) {
      if (error instanceof WebhookError) throw error;
      throw failed(reasonOf(error));
    }
  }

  private async clientFor(token: string, baseUrl: string): Promise<Client> {
    const key = `${baseUrl}\n${token}`;
    if (this.client?.key !== key) {
      const { Client } = await import('@upstash/qstash');
      this.client = {
        key,
        client: new Client({
          token,
          baseUrl,
          devMode: false,
          enableTelemetry: false,
          // One quick retry of a network failure; anything longer is the fallback's job.
          retry: { retries: 1, backoff: () => 100 },
        }),
      };
    }
    return this.client.client;
  }
}

/**
 * W4: every outgoing header reaches QStash as `Upstash-Forward-<name>`, prefixed here rather than by the
 * client (which passes any `Upstash-*` name through raw, as one of QStash's own options). Only the content
 * type goes as is: QStash forwards it as the message's content type.
 */
function forwarded(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = { 'content-type': 'application/json' };
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === 'content-type') out['content-type'] = value;
    else out[`Upstash-Forward-${name}`] = value;
  }
  return out;
}

/** HTTP status or a transport error code; never the error's message (it holds QStash's response body). */
function reasonOf(error: unknown): string {
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && Number.isInteger(status)) return `HTTP ${status}`;
  for (let current: unknown = error, depth = 0; current && depth < 3; current = (current as { cause?: unknown }).cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code)) return code;
  }
  return 'error';
}
