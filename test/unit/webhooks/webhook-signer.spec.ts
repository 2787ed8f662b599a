/**
 * Issue 3 item 8 / S2: Standard Webhooks signing with node:crypto, verified by the reference
 * `standardwebhooks` library, including over a real post (the bytes the receiver got are the bytes signed).
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { WebhookError } from '../../../src/webhooks/webhook-error.js';
import { WebhookHttpClient } from '../../../src/webhooks/webhook-http-client.js';
import { WebhookSender } from '../../../src/webhooks/webhook-sender.js';
import { WebhookSigner } from '../../../src/webhooks/webhook-signer.js';
import { startReceiver, type LoopbackReceiver } from './loopback-receiver.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const now = (): number => Math.floor(Date.now() / 1000);

describe('WebhookSigner', () => {
  it('signing: the standardwebhooks library verifies our headers', () => {
    const body = JSON.stringify({ hookId: 'h1', hookType: 'afterStep', text: 'grüße ✓', n: 1 });
    const headers = new WebhookSigner(SECRET).headers('msg_2b3c', now(), body);
    expect(headers['webhook-id']).toBe('msg_2b3c');
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(SECRET).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  it('signing: a different body, id or timestamp fails verification', () => {
    const body = '{"a":1}';
    const timestamp = now();
    const headers = new WebhookSigner(SECRET).headers('msg_1', timestamp, body);
    const verifier = new Webhook(SECRET);
    expect(() => verifier.verify('{"a":2}', { ...headers })).toThrow();
    expect(() => verifier.verify(`${body} `, { ...headers })).toThrow();
    expect(() => verifier.verify(body, { ...headers, 'webhook-id': 'msg_2' })).toThrow();
    expect(() => verifier.verify(body, { ...headers, 'webhook-timestamp': String(timestamp - 1) })).toThrow();
  });

  it('signing: another secret fails verification', () => {
    const headers = new WebhookSigner(SECRET).headers('msg_1', now(), '{}');
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    expect(() => new Webhook(other).verify('{}', { ...headers })).toThrow();
  });

  it('signing: the prefix is optional, as in the reference library', () => {
    const bare = SECRET.slice('whsec_'.length);
    const headers = new WebhookSigner(bare).headers('msg_1', now(), '{}');
    expect(() => new Webhook(SECRET).verify('{}', { ...headers })).not.toThrow();
  });

  it('signing: the UTF-8 bytes of a body sign exactly like the body itself (the sender posts the bytes it signed)', () => {
    // Multi-byte characters: the bytes differ from the UTF-16 string, the signature must not.
    const body = JSON.stringify({ text: 'grüße ✓ 🚀' });
    const signer = new WebhookSigner(SECRET);
    const fromBytes = signer.headers('msg_bytes', 1_700_000_000, Buffer.from(body, 'utf8'));
    expect(fromBytes).toEqual(signer.headers('msg_bytes', 1_700_000_000, body));
    const fresh = signer.headers('msg_bytes', now(), new Uint8Array(Buffer.from(body, 'utf8')));
    expect(new Webhook(SECRET).verify(body, { ...fresh })).toEqual(JSON.parse(body));
  });

  it('signing: the signature is stable for the same id, timestamp and body (retries reuse webhook-id)', () => {
    const signer = new WebhookSigner(SECRET);
    expect(signer.headers('msg_x', 1_700_000_000, '{}')).toEqual(signer.headers('msg_x', 1_700_000_000, '{}'));
    expect(signer.headers('msg_x', 1_700_000_000, '{}')['webhook-timestamp']).toBe('1700000000');
  });

  it.each([
    ['an empty secret', ''],
    ['the prefix alone', 'whsec_'],
    ['non-base64', 'whsec_not*base64!!-SECRETVALUE'],
    ['bad padding', 'whsec_abcde'],
  ])('configuration: %s is refused without echoing the secret', (_label, secret) => {
    let caught: unknown;
    try {
      new WebhookSigner(secret);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(WebhookError);
    expect((caught as WebhookError).code).toBe('configuration');
    if (secret.length > 'whsec_'.length) {
      expect((caught as WebhookError).message).not.toContain(secret.slice('whsec_'.length));
      expect((caught as WebhookError).stack).not.toContain(secret.slice('whsec_'.length));
    }
  });

  it('configuration: a message id with spaces or CR/LF, or a bad timestamp, is refused', () => {
    const signer = new WebhookSigner(SECRET);
    expect(() => signer.headers('msg 1', now(), '{}')).toThrow(expect.objectContaining({ code: 'configuration' }));
    expect(() => signer.headers('msg_1\r\nx: y', now(), '{}')).toThrow(WebhookError);
    expect(() => signer.headers('', now(), '{}')).toThrow(WebhookError);
    expect(() => signer.headers('msg_1', 1.5, '{}')).toThrow(WebhookError);
    expect(() => signer.headers('msg_1', -1, '{}')).toThrow(WebhookError);
  });
});

describe('signing over the wire', () => {
  let receiver: LoopbackReceiver;
  let client: WebhookHttpClient;

  beforeAll(async () => {
    receiver = await startReceiver({ '/signed': (req, res) => req.on('end', () => res.writeHead(204).end()).resume() });
    client = new WebhookHttpClient({ allowNetworks: ['127.0.0.0/8'] });
  });

  afterAll(async () => {
    await client.close();
    await receiver.close();
  });

  it('signing: the receiver verifies the exact bytes it got with the standardwebhooks library', async () => {
    const body = JSON.stringify({ hookId: 'h1', text: 'naïve — ünïcode 🚀' });
    const headers = new WebhookSigner(SECRET).headers('msg_wire', now(), body);
    await expect(client.post({ url: receiver.url('/signed'), headers: { ...headers }, body, timeoutMs: 10_000, expectBody: false })).resolves.toEqual({ status: 204, body: undefined });
    const [seen] = receiver.requests;
    expect(seen?.body).toBe(body);
    const received = { 'webhook-id': String(seen?.headers['webhook-id']), 'webhook-timestamp': String(seen?.headers['webhook-timestamp']), 'webhook-signature': String(seen?.headers['webhook-signature']) };
    expect(new Webhook(SECRET).verify(seen?.body ?? '', received)).toEqual(JSON.parse(body));
    expect(() => new Webhook(SECRET).verify(body.replace('h1', 'h2'), received)).toThrow();
  });
});

describe('WebhookSender over the wire', () => {
  let receiver: LoopbackReceiver;
  let client: WebhookHttpClient;
  const TOKEN_VAR = 'SIGNER_SPEC_HOOK_TOKEN';

  beforeAll(async () => {
    receiver = await startReceiver({ '/sent': (req, res) => req.on('end', () => res.writeHead(204).end()).resume() });
    client = new WebhookHttpClient({ allowNetworks: ['127.0.0.0/8'] });
    process.env[TOKEN_VAR] = 'token-value';
  });

  afterAll(async () => {
    delete process.env[TOKEN_VAR];
    await client.close();
    await receiver.close();
  });

  const send = async (headers: Record<string, string>, body: string) => {
    const sender = new WebhookSender(client, () => SECRET);
    const url = receiver.url('/sent');
    await expect(sender.post({ url, headers, allowedEnvVars: [TOKEN_VAR], timeoutSeconds: 10, body, webhookId: 'msg_sender' }, { expectBody: false })).resolves.toEqual({ status: 204, body: undefined });
    return receiver.requests.at(-1)!;
  };

  it('S2 / W4: the bytes posted are the bytes signed, non-ASCII included; JSON content type; templates resolved', async () => {
    const body = JSON.stringify({ hookId: 'h1', text: 'naïve — ünïcode 🚀' });
    const seen = await send({ authorization: `Bearer \${${TOKEN_VAR}}`, 'x-team': 'platform' }, body);
    expect(seen.body).toBe(body);
    expect(Number(seen.headers['content-length'])).toBe(Buffer.byteLength(body));
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.headers.authorization).toBe('Bearer token-value');
    expect(seen.headers['x-team']).toBe('platform');
    const received = { 'webhook-id': String(seen.headers['webhook-id']), 'webhook-timestamp': String(seen.headers['webhook-timestamp']), 'webhook-signature': String(seen.headers['webhook-signature']) };
    expect(received['webhook-id']).toBe('msg_sender');
    expect(new Webhook(SECRET).verify(seen.body, received)).toEqual(JSON.parse(body));
  });

  it('a content type the hook configured is kept', async () => {
    const seen = await send({ 'Content-Type': 'application/cloudevents+json' }, '{}');
    expect(seen.headers['content-type']).toBe('application/cloudevents+json');
  });
});
