/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): `webhook-signature` is
 * `v1,` + base64(HMAC-SHA256(key, `${id}.${timestamp}.${body}`)), computed over the exact string that is
 * posted (both sides encode it as UTF-8). Uses `node:crypto` only; the key never appears in an error.
 */
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { WebhookError } from './webhook-error.js';

export interface WebhookSignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

const PREFIX = 'whsec_';
/** Canonical padded base64, as the spec's `whsec_` secrets are written. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Header-safe: visible ASCII, no separators that could split a header line. */
const MESSAGE_ID = /^[\x21-\x7e]{1,256}$/;

export class WebhookSigner {
  private readonly key: KeyObject;

  /** `secret` is `whsec_` + base64 of the key (the prefix is optional, as in the reference library). */
  constructor(secret: string) {
    const encoded = typeof secret === 'string' && secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
    if (typeof encoded !== 'string' || encoded.length === 0 || !BASE64.test(encoded)) {
      throw new WebhookError('configuration', 'webhook signing secret must be "whsec_" followed by base64');
    }
    this.key = createSecretKey(Buffer.from(encoded, 'base64'));
  }

  /**
   * The three signature headers for one delivery; `messageId` stays the same across retries. `body` is
   * the posted string, or its UTF-8 bytes when the caller encoded it once to post exactly those bytes.
   */
  headers(messageId: string, timestampSeconds: number, body: string | Uint8Array): WebhookSignatureHeaders {
    if (!MESSAGE_ID.test(messageId)) throw new WebhookError('configuration', 'webhook message id must be 1-256 visible ASCII characters');
    if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
      throw new WebhookError('configuration', 'webhook timestamp must be a non-negative integer number of seconds');
    }
    const timestamp = String(timestampSeconds);
    // Two updates sign the concatenation without building it (the body may be large).
    const hmac = createHmac('sha256', this.key).update(`${messageId}.${timestamp}.`, 'utf8');
    const signature = (typeof body === 'string' ? hmac.update(body, 'utf8') : hmac.update(body)).digest('base64');
    return { 'webhook-id': messageId, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
  }
}
