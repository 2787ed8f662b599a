/**
 * `delivery: 'qstash'` with the official `@upstash/qstash` client against a local server speaking QStash's
 * publish API, which forwards to a real loopback receiver with an `Upstash-Signature` the receiver checks
 * with the official `Receiver`. No Redis: QStash delivery works in local mode (serverless deployments).
 */
import { Logger } from '@nestjs/common';
import { Receiver } from '@upstash/qstash';
import { Webhook } from 'standardwebhooks';
import type { AgentHook } from '../../../src/hooks/agent-hook.js';
import { CriticalHookDeliveryError, HookConfigurationError } from '../../../src/hooks/hook-errors.js';
import { resolveDeliverySettings } from '../../../src/queue/delivery/delivery-settings.js';
import { QStashPublisher } from '../../../src/queue/delivery/qstash-publisher.js';
import type { QueuedWebhook } from '../../../src/webhooks/queued-delivery.port.js';
import { WebhookError } from '../../../src/webhooks/webhook-error.js';
import { captureOutput, type OutputCapture } from '../security/output-capture.js';
import { startReceiver, type LoopbackReceiver, type RecordedRequest } from '../../unit/webhooks/loopback-receiver.js';
import { bootDelivery, SIGNING_SECRET, type DeliveryHarness } from './delivery-harness.js';
import { eventually } from '../../support/eventually.js';
import { freePort } from './redis-fixtures.js';
import { startQStashEmulator, type QStashEmulator } from './qstash-emulator.js';

const event = { id: 'e', type: 'onComplete', operationId: 'op-1', agentId: 'a', stepIndex: 0, timestamp: '', reason: 'done' } as const;
const HOOK_SECRET = 'resolved-qstash-hook-secret-4b8e';

let receiver: LoopbackReceiver;
let qstash: QStashEmulator;
let harness: DeliveryHarness;

function hook(id: string, extra: Partial<NonNullable<AgentHook['webhook']>> = {}): AgentHook {
  return {
    id,
    type: 'onComplete',
    webhook: {
      url: receiver.url('/hook'),
      delivery: 'qstash',
      timeout: 7,
      headers: { authorization: 'Bearer ${QSTASH_HOOK_TOKEN}' },
      allowedEnvVars: ['QSTASH_HOOK_TOKEN'],
      ...extra,
    },
  };
}

function hookRequests(): RecordedRequest[] {
  return receiver.requests.filter((r) => r.path === '/hook');
}

function verifier(): Receiver {
  return new Receiver({ currentSigningKey: qstash.currentSigningKey, nextSigningKey: qstash.nextSigningKey });
}

async function delivered(): Promise<RecordedRequest> {
  await eventually(() => hookRequests().length === 1, 'the forwarded message');
  await qstash.settled();
  await eventually(() => hookRequests()[0]!.body.length > 0, 'the request body');
  return hookRequests()[0]!;
}

beforeEach(async () => {
  receiver = await startReceiver({ '/hook': (_req, res) => res.writeHead(204).end() });
  qstash = await startQStashEmulator();
  process.env.QSTASH_TOKEN = qstash.token;
  process.env.QSTASH_URL = qstash.url;
  process.env.QSTASH_HOOK_TOKEN = HOOK_SECRET;
  harness = await bootDelivery({ mode: 'local', tuning: {} });
});

afterEach(async () => {
  await harness.close();
  await qstash.close();
  await receiver.close();
  delete process.env.QSTASH_TOKEN;
  delete process.env.QSTASH_URL;
  delete process.env.QSTASH_HOOK_TOKEN;
});

describe('qstash delivery', () => {
  it('publishes to the webhook URL with resolved headers as Upstash-Forward-* and the timeout; the receiver verifies Upstash-Signature with the official Receiver', async () => {
    harness.registry.register('op-1', [hook('q')]);
    await harness.dispatcher.dispatch('onComplete', event);

    expect(qstash.publishes).toHaveLength(1);
    const publish = qstash.publishes[0]!;
    expect(publish.destination).toBe(receiver.url('/hook'));
    expect(publish.headers.authorization).toBe(`Bearer ${qstash.token}`);
    expect(publish.headers['upstash-forward-authorization']).toBe(`Bearer ${HOOK_SECRET}`);
    expect(publish.headers['upstash-timeout']).toBe('7s');
    expect(publish.headers['upstash-method']).toBe('POST');
    expect(publish.headers['content-type']).toBe('application/json');
    // The webhook-id is QStash's deduplication id too: one message however often the publish is repeated.
    expect(publish.headers['upstash-deduplication-id']).toMatch(/^msg_/);
    expect(publish.headers['upstash-forward-webhook-id']).toBe(publish.headers['upstash-deduplication-id']);

    const request = await delivered();
    expect(request.headers.authorization).toBe(`Bearer ${HOOK_SECRET}`);
    expect(JSON.parse(request.body)).toMatchObject({ hookId: 'q', hookType: 'onComplete' });
    const signature = String(request.headers['upstash-signature']);
    await expect(verifier().verify({ signature, body: request.body, url: receiver.url('/hook') })).resolves.toBe(true);
    await expect(verifier().verify({ signature, body: `${request.body} `, url: receiver.url('/hook') })).rejects.toThrow();
    // The Standard Webhooks headers travel along, so one receiver can check either signature.
    const standard = {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    };
    expect(() => new Webhook(SIGNING_SECRET).verify(request.body, standard)).not.toThrow();
  });

  it('a message signed with the next signing key (during key rotation) still verifies', async () => {
    qstash.signWith = 'next';
    harness.registry.register('op-1', [hook('q')]);
    await harness.dispatcher.dispatch('onComplete', event);
    const request = await delivered();
    await expect(verifier().verify({ signature: String(request.headers['upstash-signature']), body: request.body })).resolves.toBe(true);
    await expect(
      new Receiver({ currentSigningKey: 'wrong-current', nextSigningKey: 'wrong-next' }).verify({ signature: String(request.headers['upstash-signature']), body: request.body }),
    ).rejects.toThrow();
  });
});

describe('W4 transport headers over qstash', () => {
  const CALLBACK = 'https://callback.example.com/steal-DISTINCTIVE-91c2';

  it('W4: an Upstash-Callback hook header is refused at registration', async () => {
    for (const name of ['Upstash-Callback', 'upstash-forward-x-team', 'UPSTASH-DELAY', 'webhook-signature', 'Host']) {
      let caught: unknown;
      try {
        harness.registry.register('op-1', [hook('q', { headers: { [name]: CALLBACK } })]);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(HookConfigurationError);
      const message = (caught as Error).message;
      expect(message).toContain('hooks[0] (q): webhook.headers');
      expect(message).toContain(JSON.stringify(name));
      expect(message).not.toContain('DISTINCTIVE');
    }
    expect(harness.registry.hasCallerHooks('op-1')).toBe(false);
    await harness.dispatcher.dispatch('onComplete', event);
    expect(qstash.publishes).toHaveLength(0);
  });

  it("W4: QStash sees a hook's header only as Upstash-Forward-<name>, and no Upstash-* option the hook chose", async () => {
    harness.registry.register('op-1', [hook('q', { headers: { 'X-Team': 'platform', authorization: 'Bearer ${QSTASH_HOOK_TOKEN}' } })]);
    await harness.dispatcher.dispatch('onComplete', event);
    expect(qstash.publishes).toHaveLength(1);
    const seen = qstash.publishes[0]!.headers;
    expect(seen['upstash-forward-x-team']).toBe('platform');
    expect(seen['x-team']).toBeUndefined();
    // Every Upstash-* name QStash reads is a forwarded header or one of the publisher's own options.
    const options = Object.keys(seen).filter((name) => name.startsWith('upstash-') && !name.startsWith('upstash-forward-'));
    expect(options.sort()).toEqual(['upstash-deduplication-id', 'upstash-method', 'upstash-timeout']);
    expect((await delivered()).headers['x-team']).toBe('platform');
  });

  it('W4: a stored webhook that bypassed the schema never reaches QStash with its Upstash-* header', async () => {
    const publisher = new QStashPublisher(resolveDeliverySettings({ webhooks: { allowNetworks: ['127.0.0.0/8'] } }));
    const refused = await publisher.publish(queued({ headers: { 'Upstash-Callback': CALLBACK } })).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(WebhookError);
    expect((refused as WebhookError).code).toBe('configuration');
    expect((refused as WebhookError).message).not.toContain('DISTINCTIVE');
    expect(qstash.publishes).toHaveLength(0);
  });
});

describe('D3 qstash fallback', () => {
  it('D3: without QSTASH_TOKEN the notification falls back to one direct post', async () => {
    delete process.env.QSTASH_TOKEN;
    harness.registry.register('op-1', [hook('q')]);
    await harness.dispatcher.dispatch('onComplete', event);
    expect(qstash.publishes).toHaveLength(0);
    expect(hookRequests()).toHaveLength(1);
    expect(hookRequests()[0]!.headers['upstash-signature']).toBeUndefined();
    expect(hookRequests()[0]!.headers.authorization).toBe(`Bearer ${HOOK_SECRET}`);
  });

  it("D2/D3: with fallback 'none' a missing token never sends unsigned: nothing is posted, CriticalHookDeliveryError", async () => {
    delete process.env.QSTASH_TOKEN;
    harness.registry.register('op-1', [hook('q', { fallback: 'none' })]);
    const error = await harness.dispatcher.dispatch('onComplete', event).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CriticalHookDeliveryError);
    expect((error as CriticalHookDeliveryError).failures).toEqual([{ point: 'onComplete', hookId: 'q', code: 'configuration' }]);
    expect(hookRequests()).toHaveLength(0);
  });

  describe('S1: a failed publish leaks neither the token nor the response body', () => {
    const BODY_MARKER = 'qstash-response-body-marker-e41f';
    let capture: OutputCapture;
    let previousLogger: unknown;

    beforeEach(() => {
      capture = captureOutput();
      previousLogger = (Logger as unknown as { staticInstanceRef?: unknown }).staticInstanceRef;
      Logger.overrideLogger(capture.logger);
      capture.start();
    });

    afterEach(() => {
      capture.stop();
      Logger.overrideLogger(previousLogger as never);
    });

    function leaks(text: string): string[] {
      return [qstash.token, BODY_MARKER, HOOK_SECRET].filter((secret) => text.includes(secret));
    }

    it('D3: a rejected publish (HTTP 500) falls back to one direct post; logs name the status only', async () => {
      qstash.failWith = { status: 500, body: `internal error for ${qstash.token}: ${BODY_MARKER}` };
      harness.registry.register('op-1', [hook('q')]);
      await harness.dispatcher.dispatch('onComplete', event);
      capture.stop();
      expect(hookRequests()).toHaveLength(1);
      expect(capture.lines.some((line) => line.includes('qstash delivery of hook q') && line.includes('queue_unavailable'))).toBe(true);
      expect(leaks(capture.lines.join('\n'))).toEqual([]);
    });

    it("D2/D3: with fallback 'none' a rejected publish posts nothing; the error names the status, not the body", async () => {
      qstash.failWith = { status: 401, body: `bad token ${qstash.token} ${BODY_MARKER}` };
      harness.registry.register('op-1', [hook('q', { fallback: 'none' })]);
      const error = await harness.dispatcher.dispatch('onComplete', event).catch((e: unknown) => e);
      capture.stop();
      expect(error).toBeInstanceOf(CriticalHookDeliveryError);
      expect((error as CriticalHookDeliveryError).failures).toEqual([{ point: 'onComplete', hookId: 'q', code: 'queue_unavailable' }]);
      expect(hookRequests()).toHaveLength(0);
      expect(leaks(`${String(error)} ${JSON.stringify(error)}`)).toEqual([]);
      expect(leaks(capture.lines.join('\n'))).toEqual([]);
    });

    it('the publisher reports HTTP status or transport code only, whatever the client says', async () => {
      const publisher = new QStashPublisher(resolveDeliverySettings({ webhooks: { allowNetworks: ['127.0.0.0/8'] } }));
      qstash.failWith = { status: 503, body: `${BODY_MARKER} ${qstash.token}` };
      const rejected = await publisher.publish(queued()).catch((e: unknown) => e);
      expect(rejected).toBeInstanceOf(WebhookError);
      expect((rejected as WebhookError).message).toBe('qstash publish of hook q failed (HTTP 503)');

      process.env.QSTASH_URL = `http://127.0.0.1:${await freePort()}`;
      const unreachable = await publisher.publish(queued()).catch((e: unknown) => e);
      expect((unreachable as WebhookError).code).toBe('queue_unavailable');
      expect((unreachable as WebhookError).message).toBe('qstash publish of hook q failed (ECONNREFUSED)');
      capture.stop();
      expect(leaks(capture.lines.join('\n'))).toEqual([]);
    });
  });
});

describe('SSRF guard on qstash destinations', () => {
  it('the destination passes the webhook URL checks and the SSRF guard before anything is published', async () => {
    const publisher = new QStashPublisher(resolveDeliverySettings({ webhooks: { allowNetworks: [] } }));
    const refused = await publisher.publish(queued()).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'network_error', message: expect.stringContaining('is not allowed') });
    const credentials = await publisher.publish(queued({ url: 'http://user:pw@127.0.0.1/hook' })).catch((e: unknown) => e);
    expect(credentials).toMatchObject({ code: 'configuration' });
    expect(qstash.publishes).toHaveLength(0);
  });

  it('the QStash API URL is operator configuration: a loopback API is reached while only the destination network is allowed', async () => {
    qstash.forward = false;
    const publisher = new QStashPublisher(resolveDeliverySettings({ webhooks: { allowNetworks: ['203.0.113.0/24'] } }));
    await publisher.publish(queued({ url: 'http://203.0.113.7/hook' }));
    expect(qstash.publishes.map((p) => p.destination)).toEqual(['http://203.0.113.7/hook']);
  });
});

function queued(extra: Partial<QueuedWebhook> = {}): QueuedWebhook {
  return {
    kind: 'qstash',
    webhookId: 'msg_test',
    hookId: 'q',
    point: 'onComplete',
    url: receiver.url('/hook'),
    headers: { authorization: 'Bearer ${QSTASH_HOOK_TOKEN}' },
    allowedEnvVars: ['QSTASH_HOOK_TOKEN'],
    timeoutSeconds: 5,
    body: '{"hookId":"q"}',
    ...extra,
  };
}
