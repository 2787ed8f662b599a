/**
 * Without API keys the server has no auth, so it must not be reachable from other machines (DESIGN §7): it
 * refuses to bind anything but a loopback address, and says how to fix it (G7).
 */
import ipaddr from 'ipaddr.js';
import { API_KEYS_ENV, API_KEYS_FILE_ENV, type ApiKeyRing } from './api-keys.js';
import { ServerConfigurationError } from './server-configuration-error.js';

export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost') return true;
  if (!ipaddr.isValid(bare)) return false;
  // `process` turns an IPv4-mapped IPv6 address (::ffff:127.0.0.1) into its IPv4 form.
  return ipaddr.process(bare).range() === 'loopback';
}

export function assertLoopbackWithoutKeys(host: string, keys: ApiKeyRing): void {
  if (keys.enabled || isLoopbackHost(host)) return;
  throw new ServerConfigurationError(
    `refusing to listen on ${host} without API keys: anyone who can reach it could run agents. ` +
      `Set ${API_KEYS_ENV}="key:owner,…" or ${API_KEYS_FILE_ENV}, or listen on loopback (--host 127.0.0.1).`,
  );
}
