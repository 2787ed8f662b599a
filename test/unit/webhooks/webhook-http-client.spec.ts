/**
 * W7 / W12 / S1: the hardened webhook HTTP client against a real receiver on loopback (allow-listed with
 * `127.0.0.0/8`; the refusals without an allow-list live in ssrf-guard.spec.ts). No timing thresholds:
 * deadlines are short only against servers that stall for far longer.
 */
import { getEventListeners } from 'node:events';
import type { ServerResponse } from 'node:http';
import { WebhookError } from '../../../src/webhooks/webhook-error.js';
import { WebhookHttpClient, type WebhookPostRequest } from '../../../src/webhooks/webhook-http-client.js';
import { RequestDeadline } from '../../../src/common/request-deadline.js';
import { later, startReceiver, streamBytes, writeForever, type LoopbackReceiver } from './loopback-receiver.js';

const LOOPBACK = ['127.0.0.0/8'];
const SECRET = 'Bearer sk-live-DISTINCTIVE-4f9c2a7e1b';
const REQUEST_SECRET = 'request-body-DISTINCTIVE-9d1e';
const RESPONSE_SECRET = 'response-body-DISTINCTIVE-3b7a';
/** Long enough that only a broken client would hit it in the tests that expect success. */
const GENEROUS_MS = 10_000;

let receiver: LoopbackReceiver;
let target: LoopbackReceiver;
let client: WebhookHttpClient;

/** A latch the receiver marks when a request arrives, so a test can act while the server stalls. */
function arrival(): { seen: Promise<void>; mark: () => void } {
  let mark: () => void = () => undefined;
  const seen = new Promise<void>((resolve) => (mark = resolve));
  return { seen, mark: () => mark() };
}

function post(path: string, overrides: Partial<WebhookPostRequest> = {}): Promise<{ status: number; body: string | undefined }> {
  return client.post({
    url: receiver.url(path),
    headers: { authorization: SECRET },
    body: JSON.stringify({ event: REQUEST_SECRET }),
    timeoutMs: GENEROUS_MS,
    expectBody: true,
    ...overrides,
  });
}

async function failureOf(work: Promise<unknown>): Promise<WebhookError> {
  const error = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WebhookError);
  return error as WebhookError;
}

function expectNoSecrets(error: WebhookError): void {
  for (const secret of [SECRET, 'sk-live-DISTINCTIVE', REQUEST_SECRET, RESPONSE_SECRET]) {
    expect(error.message).not.toContain(secret);
    expect(error.stack ?? '').not.toContain(secret);
  }
}

function json(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(body);
}

const hooks = {
  delayed: arrival(),
  trickle: arrival(),
};

beforeAll(async () => {
  target = await startReceiver({ '/landing': (_req, res) => json(res, 200, '{"decision":"allow"}') });
  receiver = await startReceiver({
    '/allow': (_req, res) => json(res, 200, '{"decision":"allow"}'),
    '/no-content': (_req, res) => res.writeHead(204).end(),
    '/empty-200': (_req, res) => res.writeHead(200).end(),
    '/exactly-64k': (_req, res) => streamBytes(res, 65_536),
    '/over-64k': (_req, res) => streamBytes(res, 65_537),
    '/declared-huge': (_req, res) => {
      res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) });
      writeForever(res, Buffer.alloc(16_384, 0x78), 1);
    },
    '/bad-utf8': (_req, res) => res.writeHead(200).end(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d])),
    '/utf8': (_req, res) => res.writeHead(200).end(Buffer.from('{"reason":"zu groß ✓"}', 'utf8')),
    '/endless-500': (_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      writeForever(res, RESPONSE_SECRET, 5);
    },
    '/status-404': (_req, res) => json(res, 404, RESPONSE_SECRET),
    '/redirect-302': (_req, res) => res.writeHead(302, { location: target.url('/landing') }).end(),
    '/redirect-307': (_req, res) => res.writeHead(307, { location: target.url('/landing') }).end(),
    '/delay-headers': (_req, res) => {
      hooks.delayed.mark();
      later(res, 5_000, () => json(res, 200, '{"decision":"allow"}'));
    },
    '/trickle': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      hooks.trickle.mark();
      // One byte at a time, forever: every chunk arrives quickly, only a whole-request deadline ends it.
      writeForever(res, ' ', 20);
    },
    '/reset': (req) => req.socket.destroy(),
    '/endless-200': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      writeForever(res, Buffer.alloc(16_384, 0x7b), 1);
    },
    '/invalid-json-200': (_req, res) => json(res, 200, '{not json'),
    '/retry-after-503': (_req, res) => res.writeHead(503, { 'retry-after': '3' }).end(RESPONSE_SECRET),
  });
  client = new WebhookHttpClient({ allowNetworks: LOOPBACK });
});

afterAll(async () => {
  await client.close();
  await receiver.close();
  await target.close();
});

describe('WebhookHttpClient: requests', () => {
  it('posts JSON with the given headers and the exact body (W4)', async () => {
    const body = JSON.stringify({ hookId: 'h1', text: 'grüße' });
    const response = await post('/allow', { body });
    expect(response).toEqual({ status: 200, body: '{"decision":"allow"}' });
    const seen = receiver.requests.filter((r) => r.path === '/allow').at(-1);
    expect(seen?.method).toBe('POST');
    expect(seen?.headers['content-type']).toBe('application/json');
    expect(seen?.headers.authorization).toBe(SECRET);
    expect(seen?.body).toBe(body);
  });

  it('W7: a control receiver may answer 204: no body', async () => {
    await expect(post('/no-content')).resolves.toEqual({ status: 204, body: undefined });
  });

  it('W11: an empty 2xx control body is undefined', async () => {
    await expect(post('/empty-200')).resolves.toEqual({ status: 200, body: undefined });
  });

  it('W11: the client returns an invalid-JSON 2xx body as text (parsing is the caller\'s job)', async () => {
    await expect(post('/invalid-json-200')).resolves.toEqual({ status: 200, body: '{not json' });
  });

  it('W12: a 65,536-byte control body streamed in chunks is accepted', async () => {
    const response = await post('/exactly-64k');
    expect(response.status).toBe(200);
    expect(response.body).toHaveLength(65_536);
  });

  it('W12: a 65,537-byte control body streamed in chunks is response_too_large', async () => {
    const error = await failureOf(post('/over-64k'));
    expect(error.code).toBe('response_too_large');
  });

  it('W12: a declared content-length over 64 KiB is response_too_large without reading an endless body', async () => {
    const error = await failureOf(post('/declared-huge'));
    expect(error.code).toBe('response_too_large');
  });

  it('W12: invalid UTF-8 in a control body is invalid_response', async () => {
    const error = await failureOf(post('/bad-utf8'));
    expect(error.code).toBe('invalid_response');
  });

  it('W12: valid multi-byte UTF-8 decodes intact', async () => {
    await expect(post('/utf8')).resolves.toEqual({ status: 200, body: '{"reason":"zu groß ✓"}' });
  });

  it('W12: a non-2xx is http_error with its status, and its endless body is never read', async () => {
    const error = await failureOf(post('/endless-500'));
    expect(error.code).toBe('http_error');
    expect(error.status).toBe(500);
    expectNoSecrets(error);
  });

  it('W12: a 404 is http_error and the response body is not in the error', async () => {
    const error = await failureOf(post('/status-404'));
    expect(error).toMatchObject({ code: 'http_error', status: 404 });
    expectNoSecrets(error);
  });

  it.each(['/redirect-302', '/redirect-307'])('W12: %s is not followed; Authorization never reaches the redirect target', async (path) => {
    const before = receiver.requests.length;
    const error = await failureOf(post(path));
    expect(error.code).toBe('http_error');
    expect(error.status).toBe(Number(path.slice(-3)));
    expect(error.message).toContain('redirects are not followed');
    expectNoSecrets(error);
    // The first receiver did get the header; the target got nothing at all.
    expect(receiver.requests.slice(before).map((r) => r.headers.authorization)).toEqual([SECRET]);
    expect(target.requests).toHaveLength(0);
    expect(target.connections()).toBe(0);
  });

  it('W12: a connection reset is network_error', async () => {
    const error = await failureOf(post('/reset'));
    expect(error.code).toBe('network_error');
    expectNoSecrets(error);
  });

  it('W12: a refused connection is network_error', async () => {
    // A port that was just listening and is now closed refuses connections.
    const closed = await startReceiver();
    const url = closed.url('/allow');
    await closed.close();
    const error = await failureOf(client.post({ url, headers: { authorization: SECRET }, body: '{}', timeoutMs: GENEROUS_MS, expectBody: true }));
    expect(error.code).toBe('network_error');
    expectNoSecrets(error);
  });

  it('W12: an unresolvable host name is network_error', async () => {
    const error = await failureOf(client.post({ url: 'http://no-such-host.invalid/', headers: { authorization: SECRET }, body: '{}', timeoutMs: GENEROUS_MS, expectBody: true }));
    expect(error.code).toBe('network_error');
    expectNoSecrets(error);
  });

  it('configuration: a non-http URL or one with credentials is refused before anything is sent', async () => {
    await expect(post('/allow', { url: 'ftp://127.0.0.1/x' })).rejects.toMatchObject({ code: 'configuration' });
    const embedded = await failureOf(post('/allow', { url: `http://user:pa55word@127.0.0.1:${receiver.port}/allow` }));
    expect(embedded.code).toBe('configuration');
    expect(embedded.message).not.toContain('pa55word');
    await expect(post('/allow', { url: 'not a url' })).rejects.toMatchObject({ code: 'configuration' });
  });

  it('S1: an invalid header value is a configuration error that does not echo the value', async () => {
    const error = await failureOf(post('/allow', { headers: { authorization: `${SECRET}\r\nx-injected: 1` } }));
    expect(error.code).toBe('configuration');
    expectNoSecrets(error);
  });
});

describe('WebhookHttpClient: notifications (W7)', () => {
  it('W7: a notification succeeds on 2xx and discards an endless body unread', async () => {
    await expect(post('/endless-200', { expectBody: false })).resolves.toEqual({ status: 200, body: undefined });
  });

  it('W7: a notification discards even an oversized or invalid body', async () => {
    await expect(post('/over-64k', { expectBody: false })).resolves.toEqual({ status: 200, body: undefined });
    await expect(post('/bad-utf8', { expectBody: false })).resolves.toEqual({ status: 200, body: undefined });
  });

  it('W7: a notification answered 204 succeeds', async () => {
    await expect(post('/no-content', { expectBody: false })).resolves.toEqual({ status: 204, body: undefined });
  });

  it('W12: a notification answered non-2xx is still http_error', async () => {
    await expect(post('/endless-500', { expectBody: false })).rejects.toMatchObject({ code: 'http_error', status: 500 });
  });

  it("a non-2xx answer keeps the receiver's Retry-After (queued deliveries honour it), not its body", async () => {
    const error = await failureOf(post('/retry-after-503', { expectBody: false }));
    expect(error).toMatchObject({ code: 'http_error', status: 503, retryAfterMs: 3_000 });
    expectNoSecrets(error);
    expect((await failureOf(post('/endless-500', { expectBody: false }))).retryAfterMs).toBeUndefined();
  });
});

describe('WebhookHttpClient: one deadline, cancellation (W12)', () => {
  it('W12: a server delaying headers past the deadline is timeout', async () => {
    const error = await failureOf(post('/delay-headers', { timeoutMs: 200 }));
    expect(error.code).toBe('timeout');
    expectNoSecrets(error);
  });

  it('W12: one deadline covers the body: a trickling body (headers on time) is timeout', async () => {
    const error = await failureOf(post('/trickle', { timeoutMs: 300 }));
    expect(error.code).toBe('timeout');
    expectNoSecrets(error);
  });

  it('W12: a signal aborted before the call is cancelled and nothing is sent', async () => {
    const before = receiver.requests.length;
    const controller = new AbortController();
    controller.abort();
    const error = await failureOf(post('/allow', { signal: controller.signal }));
    expect(error.code).toBe('cancelled');
    expect(receiver.requests.length).toBe(before);
  });

  it('W12: aborting while the server delays headers is cancelled', async () => {
    hooks.delayed = arrival();
    const controller = new AbortController();
    const pending = post('/delay-headers', { signal: controller.signal });
    await hooks.delayed.seen;
    controller.abort();
    const error = await failureOf(pending);
    expect(error.code).toBe('cancelled');
  });

  it('W12: aborting while the body trickles is cancelled', async () => {
    hooks.trickle = arrival();
    const controller = new AbortController();
    const pending = post('/trickle', { signal: controller.signal });
    await hooks.trickle.seen;
    controller.abort();
    const error = await failureOf(pending);
    expect(error.code).toBe('cancelled');
  });

  it('W12: an allow arriving after cancellation is still cancelled', async () => {
    const controller = new AbortController();
    receiver.route('/allow-after-abort', (_req, res) => {
      controller.abort();
      json(res, 200, '{"decision":"allow"}');
    });
    const error = await failureOf(post('/allow-after-abort', { signal: controller.signal }));
    expect(error.code).toBe('cancelled');
  });

  it('W12: cancellation wins over timeout when both happened', async () => {
    const controller = new AbortController();
    const deadline = new RequestDeadline(1, controller.signal);
    // Wait for the deadline itself to pass (its abort), then cancel.
    if (!deadline.signal.aborted) await new Promise((resolve) => deadline.signal.once('abort', resolve));
    expect(deadline.timedOut).toBe(true);
    expect(deadline.signal.aborted).toBe(true);
    controller.abort();
    expect(deadline.cancelled).toBe(true);
    expect(deadline.timedOut).toBe(false);
    deadline.dispose();
  });

  it('a caller abort after a successful request changes nothing and leaves no listener behind', async () => {
    const controller = new AbortController();
    await expect(post('/allow', { signal: controller.signal })).resolves.toMatchObject({ status: 200 });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    controller.abort();
    await expect(post('/allow')).resolves.toMatchObject({ status: 200 });
  });
});

describe('WebhookHttpClient: per-destination concurrency cap', () => {
  it('never opens more than connectionsPerOrigin connections to one destination', async () => {
    let active = 0;
    let peak = 0;
    const busy = await startReceiver({
      '/slow': (_req, res) => {
        active += 1;
        peak = Math.max(peak, active);
        later(res, 50, () => {
          active -= 1;
          json(res, 200, '{}');
        });
      },
    });
    const capped = new WebhookHttpClient({ allowNetworks: LOOPBACK, connectionsPerOrigin: 2 });
    try {
      const results = await Promise.all(
        Array.from({ length: 6 }, () => capped.post({ url: busy.url('/slow'), headers: {}, body: '{}', timeoutMs: GENEROUS_MS, expectBody: true })),
      );
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
      expect(busy.connections()).toBeLessThanOrEqual(2);
      expect(peak).toBeLessThanOrEqual(2);
      expect(peak).toBeGreaterThanOrEqual(1);
    } finally {
      await capped.close();
      await busy.close();
    }
  });

  it('configuration: connectionsPerOrigin must be a positive integer', () => {
    expect(() => new WebhookHttpClient({ connectionsPerOrigin: 0 })).toThrow(expect.objectContaining({ code: 'configuration' }));
    expect(() => new WebhookHttpClient({ connectionsPerOrigin: 1.5 })).toThrow(WebhookError);
  });
});

describe('S1: errors never carry header values or bodies', () => {
  it('S1: no failure mode puts the Authorization value, request body or response body in message or stack', async () => {
    const failures = await Promise.all([
      failureOf(post('/endless-500')),
      failureOf(post('/status-404')),
      failureOf(post('/redirect-302')),
      failureOf(post('/reset')),
      failureOf(post('/over-64k')),
      failureOf(post('/bad-utf8')),
      failureOf(post('/delay-headers', { timeoutMs: 200 })),
    ]);
    expect(failures.map((f) => f.code)).toEqual(['http_error', 'http_error', 'http_error', 'network_error', 'response_too_large', 'invalid_response', 'timeout']);
    failures.forEach(expectNoSecrets);
  });
});
