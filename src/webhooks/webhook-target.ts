/**
 * Where a hook webhook may be sent. `webhookTarget` is the per-request URL check of the hardened client;
 * `checkRelayedTarget` applies the SSRF guard to a URL that another service will call for us (QStash), where
 * no connection of ours passes through the guarded connector. Errors name the host at most, never the URL:
 * query strings often carry tokens.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { refused, type SsrfGuard } from './ssrf-guard.js';
import { WebhookError } from './webhook-error.js';

/** Absolute http(s) URL without embedded credentials. */
export function webhookTarget(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookError('configuration', 'webhook url is not a valid absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new WebhookError('configuration', `webhook url for ${url.host || 'an unknown host'} must use http or https`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new WebhookError('configuration', `webhook url for ${url.host} must not embed credentials`);
  }
  return url;
}

/**
 * The URL checks plus the SSRF guard for a destination a relay will call: an IP literal must be admitted,
 * a host name must resolve and every address it resolves to must be admitted (the relay may pick any).
 */
export async function checkRelayedTarget(raw: string, guard: SsrfGuard): Promise<URL> {
  const url = webhookTarget(raw);
  // URL keeps the brackets of an IPv6 literal in `hostname`.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) !== 0) {
    if (guard.admit(host) === undefined) throw refused(host);
    return url;
  }
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    const known = typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code) ? ` (${code})` : '';
    throw new WebhookError('network_error', `webhook destination ${host} could not be resolved${known}`);
  }
  if (addresses.length === 0 || addresses.some(({ address }) => guard.admit(address) === undefined)) throw refused(host);
  return url;
}
