/**
 * The undici connector every webhook connection goes through. Host names are resolved by the guard's
 * `lookup`; IP-literal hosts (which `net` connects to without any lookup) are checked here and connected in
 * their canonical form, so nothing reaches a socket unchecked.
 */
import { isIP } from 'node:net';
import { buildConnector } from 'undici';
import { refused, type SsrfGuard } from './ssrf-guard.js';

export function guardedConnector(guard: SsrfGuard, options: buildConnector.BuildOptions = {}): buildConnector.connector {
  const connect = buildConnector({ ...options, lookup: guard.lookup });
  return (target, callback) => {
    // undici has already stripped the brackets of an IPv6 literal.
    if (isIP(target.hostname) === 0) {
      connect(target, callback);
      return;
    }
    const address = guard.admit(target.hostname);
    if (address === undefined) {
      // Asynchronous like a real connect failure: undici does not expect the callback during the call.
      process.nextTick(() => callback(refused(target.hostname), null));
      return;
    }
    connect({ ...target, hostname: address }, callback);
  };
}
