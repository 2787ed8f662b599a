/**
 * Posts one outgoing webhook: headers resolved and signed now (`OutgoingHeaders`), then the hardened client
 * (SSRF guard, one deadline). Shared by direct delivery and the queue's delivery worker, so a retried
 * delivery is built exactly like a direct one.
 */
import { hasContentType, JSON_CONTENT_TYPE } from './json-content-type.js';
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
    // The signature covers exactly the bytes that are posted.
    const { headers, body } = this.headers.request(webhook);
    // A fresh object of our own: the JSON content type goes in place, so the client has nothing to copy.
    if (!hasContentType(headers)) headers['content-type'] = JSON_CONTENT_TYPE;
    return this.client.post({
      url: webhook.url,
      headers,
      body,
      timeoutMs: webhook.timeoutSeconds * 1000,
      expectBody: options.expectBody,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }
}
