/**
 * DESIGN §4 / issue 3 item 7: the SSRF guard. Non-global destinations are refused as `network_error`
 * before any connection reaches the loopback receiver; the allow-list opts networks in; the lookup hands
 * the connector only addresses it checked.
 */
import type { LookupAddress } from 'node:dns';
import { ALLOW_NETWORKS_ENV, parseAllowNetworks, SsrfGuard } from '../../../src/webhooks/ssrf-guard.js';
import { WebhookError } from '../../../src/webhooks/webhook-error.js';
import { WebhookHttpClient } from '../../../src/webhooks/webhook-http-client.js';
import { startReceiver, type LoopbackReceiver } from './loopback-receiver.js';

const SECRET = 'Bearer sk-live-SSRF-DISTINCTIVE-c0ffee';

interface LookupResult {
  error: NodeJS.ErrnoException | null;
  address: string | LookupAddress[];
  family?: number;
}

function lookup(guard: SsrfGuard, hostname: string, all: boolean): Promise<LookupResult> {
  return new Promise((resolve) => guard.lookup(hostname, { all }, (error, address, family) => resolve({ error, address, family })));
}

describe('SsrfGuard.isAllowed (no allow-list)', () => {
  const guard = new SsrfGuard([]);

  it.each([
    ['::1', 'IPv6 loopback'],
    ['fc00::1', 'ULA fc00::/7'],
    ['fd12:3456::1', 'ULA fd00::/8'],
    ['fe80::1', 'IPv6 link-local'],
    ['100.64.0.1', 'CGNAT 100.64/10'],
    ['224.0.0.1', 'IPv4 multicast'],
    ['ff02::1', 'IPv6 multicast'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'IPv6 unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback /8'],
    ['10.0.0.1', 'private 10/8'],
    ['172.16.0.1', 'private 172.16/12'],
    ['172.31.255.255', 'private 172.16/12 upper end'],
    ['192.168.1.1', 'private 192.168/16'],
    ['169.254.169.254', 'link-local cloud metadata'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'documentation TEST-NET-1'],
    ['198.51.100.1', 'documentation TEST-NET-2'],
    ['203.0.113.1', 'documentation TEST-NET-3'],
    ['198.18.0.1', 'benchmarking'],
    ['240.0.0.1', 'reserved 240/4'],
    ['2001:db8::1', 'IPv6 documentation'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex form'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
    ['64:ff9b::7f00:1', 'NAT64 of loopback'],
    ['2002:7f00:1::', '6to4 of loopback'],
    ['::7f00:1', 'IPv4-compatible (outside 2000::/3)'],
    ['fec0::1', 'deprecated site-local'],
  ])('refuses %s (%s)', (address) => {
    expect(guard.isAllowed(address)).toBe(false);
  });

  it.each(['8.8.8.8', '1.1.1.1', '2001:4860:4860::8888', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows the global address %s', (address) => {
    expect(guard.isAllowed(address)).toBe(true);
  });

  it.each(['localhost', '0x7f.1', '2130706433', '127.1', '', 'example.com'])('refuses the non-literal %j (only canonical IP literals are checked as addresses)', (value) => {
    expect(guard.isAllowed(value)).toBe(false);
  });

  it('canonicalises IPv4-mapped IPv6 before checking and hands back the IPv4 form', () => {
    expect(guard.admit('::ffff:8.8.8.8')).toBe('8.8.8.8');
    expect(guard.admit('::ffff:808:808')).toBe('8.8.8.8');
    expect(guard.admit('::ffff:127.0.0.1')).toBeUndefined();
  });
});

describe('SsrfGuard allow-list', () => {
  it('a CIDR opts its network in, nothing else', () => {
    const guard = new SsrfGuard(['127.0.0.0/8']);
    expect(guard.isAllowed('127.0.0.1')).toBe(true);
    expect(guard.isAllowed('127.9.9.9')).toBe(true);
    expect(guard.isAllowed('::ffff:127.0.0.1')).toBe(true);
    expect(guard.admit('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(guard.isAllowed('::1')).toBe(false);
    expect(guard.isAllowed('10.0.0.1')).toBe(false);
    expect(guard.isAllowed('169.254.169.254')).toBe(false);
    expect(guard.isAllowed('8.8.8.8')).toBe(true);
  });

  it('accepts IPv6 CIDRs, IPv4-mapped CIDRs and single addresses', () => {
    const guard = new SsrfGuard(['fd00::/8', '::ffff:10.0.0.0/104', '192.168.1.7']);
    expect(guard.isAllowed('fd12::1')).toBe(true);
    expect(guard.isAllowed('fc00::1')).toBe(false);
    expect(guard.isAllowed('10.1.2.3')).toBe(true);
    expect(guard.isAllowed('192.168.1.7')).toBe(true);
    expect(guard.isAllowed('192.168.1.8')).toBe(false);
  });

  it.each(['10.0.0.0/33', '::/129', '0x7f.0.0.0/8', 'not-a-cidr', '10.0.0.0/', '10.0.0.0/8/8', 'localhost/8'])('configuration: the invalid entry %j is refused', (entry) => {
    expect(() => new SsrfGuard([entry])).toThrow(expect.objectContaining({ code: 'configuration' }));
  });

  it('parseAllowNetworks reads a trimmed comma-separated list; unset or blank is empty', () => {
    expect(parseAllowNetworks({})).toEqual([]);
    expect(parseAllowNetworks({ [ALLOW_NETWORKS_ENV]: '' })).toEqual([]);
    expect(parseAllowNetworks({ [ALLOW_NETWORKS_ENV]: ' 127.0.0.0/8, ,fd00::/8 ,' })).toEqual(['127.0.0.0/8', 'fd00::/8']);
  });

  it('parseAllowNetworks: an invalid CIDR is a configuration error naming the variable and the entry, never its value (G7)', () => {
    let caught: unknown;
    try {
      parseAllowNetworks({ [ALLOW_NETWORKS_ENV]: '10.0.0.0/8,10.0.0.0/40' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(WebhookError);
    const error = caught as WebhookError;
    expect(error.code).toBe('configuration');
    expect(error.message).toContain(ALLOW_NETWORKS_ENV);
    expect(error.message).toContain('entry 2');
    expect(error.message).not.toContain('10.0.0.0');
  });
});

describe('SsrfGuard.lookup', () => {
  it('drops every non-global answer: localhost has none left and is network_error naming the host', async () => {
    const result = await lookup(new SsrfGuard([]), 'localhost', true);
    expect(result.error).toBeInstanceOf(WebhookError);
    expect(result.error).toMatchObject({ code: 'network_error' });
    expect(result.error?.message).toContain('localhost');
    expect(result.error?.message).toContain('not allowed');
  });

  it('with the allow-list, hands over only the checked addresses (all: true)', async () => {
    const result = await lookup(new SsrfGuard(['127.0.0.0/8']), 'localhost', true);
    expect(result.error).toBeNull();
    const addresses = result.address as LookupAddress[];
    expect(addresses.length).toBeGreaterThan(0);
    for (const { address, family } of addresses) {
      expect(address.startsWith('127.')).toBe(true);
      expect(family).toBe(4);
    }
  });

  it('with the allow-list, hands over one checked address (all: false)', async () => {
    const result = await lookup(new SsrfGuard(['127.0.0.0/8']), 'localhost', false);
    expect(result.error).toBeNull();
    expect(result.address).toMatch(/^127\./);
    expect(result.family).toBe(4);
  });

  it('odd IPv4 spellings are resolved, then checked: 0x7f.1 and 2130706433 are loopback', async () => {
    for (const name of ['0x7f.1', '2130706433']) {
      const refused = await lookup(new SsrfGuard([]), name, true);
      expect(refused.error).toMatchObject({ code: 'network_error' });
      const allowed = await lookup(new SsrfGuard(['127.0.0.0/8']), name, false);
      expect(allowed.address).toBe('127.0.0.1');
    }
  });

  it('a DNS failure is passed through as the resolver error', async () => {
    const result = await lookup(new SsrfGuard([]), 'no-such-host.invalid', true);
    expect(result.error).not.toBeNull();
    expect(result.error).not.toBeInstanceOf(WebhookError);
  });
});

describe('SSRF guard in the HTTP client', () => {
  let receiver: LoopbackReceiver;
  let guarded: WebhookHttpClient;
  let allowListed: WebhookHttpClient;

  beforeAll(async () => {
    receiver = await startReceiver({ '/hook': (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"decision":"allow"}') });
    guarded = new WebhookHttpClient();
    allowListed = new WebhookHttpClient({ allowNetworks: ['127.0.0.0/8'] });
  });

  afterAll(async () => {
    await guarded.close();
    await allowListed.close();
    await receiver.close();
  });

  const refusedUrls = (port: number): string[] => [
    `http://127.0.0.1:${port}/hook`,
    `http://localhost:${port}/hook`,
    `http://10.0.0.1:${port}/hook`,
    'http://169.254.169.254/latest/meta-data/',
    `http://[::ffff:127.0.0.1]:${port}/hook`,
    `http://0x7f.1:${port}/hook`,
    `http://2130706433:${port}/hook`,
    `http://127.1:${port}/hook`,
    `http://0.0.0.0:${port}/hook`,
    `http://[::1]:${port}/hook`,
    `https://127.0.0.1:${port}/hook`,
    `https://localhost:${port}/hook`,
    `http://[0:0:0:0:0:ffff:7f00:1]:${port}/hook`,
    `http://[::127.0.0.1]:${port}/hook`,
  ];

  it('without an allow-list, loopback, private, metadata and odd literal forms are network_error and nothing reaches the receiver', async () => {
    const urls = refusedUrls(receiver.port);
    for (const url of urls) {
      const error = await guarded.post({ url, headers: { authorization: SECRET }, body: '{}', timeoutMs: 10_000, expectBody: true }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect({ url, error }).toEqual({ url, error: expect.any(WebhookError) });
      const failure = error as WebhookError;
      expect({ url, code: failure.code }).toEqual({ url, code: 'network_error' });
      // Refused by the guard, not by a failed connect attempt.
      expect(failure.message).toContain('is not allowed');
      expect(failure.message).not.toContain(SECRET);
      expect(failure.stack ?? '').not.toContain(SECRET);
    }
    expect(receiver.requests).toHaveLength(0);
    expect(receiver.connections()).toBe(0);
  });

  it('the refusal names the host', async () => {
    const error = await guarded.post({ url: `http://localhost:${receiver.port}/hook`, headers: {}, body: '{}', timeoutMs: 10_000, expectBody: false }).catch((caught: unknown) => caught);
    expect((error as WebhookError).message).toContain('localhost');
  });

  it('with allowNetworks 127.0.0.0/8 the loopback receiver is reachable by every spelling', async () => {
    const port = receiver.port;
    const before = receiver.requests.length;
    const urls = [`http://127.0.0.1:${port}/hook`, `http://localhost:${port}/hook`, `http://[::ffff:127.0.0.1]:${port}/hook`, `http://0x7f.1:${port}/hook`, `http://2130706433:${port}/hook`];
    for (const url of urls) {
      await expect(allowListed.post({ url, headers: {}, body: '{}', timeoutMs: 10_000, expectBody: true })).resolves.toEqual({ status: 200, body: '{"decision":"allow"}' });
    }
    expect(receiver.requests.length - before).toBe(urls.length);
  });

  it('the allow-list does not open other private networks', async () => {
    const error = await allowListed.post({ url: 'http://169.254.169.254/latest/meta-data/', headers: {}, body: '{}', timeoutMs: 10_000, expectBody: true }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'network_error' });
    expect((error as WebhookError).message).toContain('is not allowed');
  });
});
