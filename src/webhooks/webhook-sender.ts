/**
 * Posts one outgoing webhook: headers resolved and signed now (`OutgoingHeaders`), then the hardened client
 * (SSRF guard, one deadline). Shared by direct delivery and the queue's delivery worker, so a retried
 * delivery is built exactly like a direct one.
 */
import { OutgoingHeaders, type OutgoingWebhook } from './outgoing-headers.js';
import type { WebhookHttpClient, WebhookPostResponse } from './webhook-http-client.js';

export interface SendOptions {
  /** Controls read the body; notifications discard it (W7). */
  readonly expectBody: boolean;
  readonly signal?: AbortSignal;
}

export class WebhookSender {
  private readonly headers: OutgoingHeaders;

  constructor(
    private readonly client: WebhookHttpClient,
    secret: () => string | undefined,
  ) {
    this.headers = new OutgoingHeaders(secret);
  }

  post(webhook: OutgoingWebhook, options: SendOptions): Promise<WebhookPostResponse> {
    return this.client.post({
      url: webhook.url,
      headers: this.headers.for(webhook),
      body: webhook.body,
      timeoutMs: webhook.timeoutSeconds * 1000,
      expectBody: options.expectBody,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }
}
