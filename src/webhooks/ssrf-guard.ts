/**
 * SSRF guard for hook webhooks (DESIGN §4): a webhook URL is user input, so a connection may only reach a
 * globally routable address unless the operator opted a network in (`allowNetworks`). The guard is a
 * `net`-compatible `lookup`: the addresses it checks are the only ones it hands to the connector, so a DNS
 * answer cannot change between the check and the connect (no rebinding gap).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { WebhookError } from './webhook-error.js';

export const ALLOW_NETWORKS_ENV = 'AGENT_HOOKS_WEBHOOK_ALLOW_NETWORKS';

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Network = readonly [Address, number];

/** The callback shape `net.connect({ lookup })` passes: one address, or all of them when `options.all`. */
export type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** Global unicast IPv6 (RFC 4291): anything outside 2000::/3 is unallocated or special-purpose. */
const GLOBAL_UNICAST_V6: Network = [ipaddr.IPv6.parse('2000::'), 3];

export class SsrfGuard {
  private readonly allowed: readonly Network[];

  constructor(allowNetworks: readonly string[]) {
    this.allowed = allowNetworks.map((entry, index) => {
      const network = parseNetwork(entry);
      // By position: a configuration error never echoes the value (G7).
      if (!network) throw new WebhookError('configuration', `allowNetworks entry ${index + 1} is not a valid CIDR`);
      return network;
    });
  }

  /** Whether a connection to this IP literal may be made. Anything that is not an IP literal is refused. */
  isAllowed(address: string): boolean {
    return this.admit(address) !== undefined;
  }

  /**
   * The canonical form of `address` (IPv4-mapped IPv6 becomes IPv4) when it may be connected to, else
   * `undefined`. Connecting to the canonical form keeps "the address checked" and "the address connected"
   * the same bytes.
   */
  admit(address: string): string | undefined {
    // Only real literals: odd IPv4 spellings (`0x7f.1`) must go through DNS and come back canonical.
    if (isIP(address) === 0) return undefined;
    let parsed: Address;
    try {
      parsed = ipaddr.process(address);
    } catch {
      return undefined;
    }
    if (this.allowed.some((network) => inNetwork(parsed, network)) || isGlobal(parsed)) return parsed.toString();
    return undefined;
  }

  /**
   * `dns.lookup` with every non-global answer dropped. Handles both `net` call shapes (`all: true` for
   * happy-eyeballs, a single address otherwise). No allowed answer is a `network_error` naming the host.
   */
  readonly lookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
    dnsLookup(hostname, { family, hints: options.hints ?? 0, all: true, order: 'verbatim' }, (error, answers) => {
      if (error) {
        callback(error, options.all ? [] : '');
        return;
      }
      const checked: LookupAddress[] = [];
      for (const answer of answers) {
        const address = this.admit(answer.address);
        if (address !== undefined) checked.push({ address, family: isIP(address) });
      }
      const first = checked[0];
      if (!first) {
        callback(refused(hostname), options.all ? [] : '');
        return;
      }
      if (options.all) callback(null, checked);
      else callback(null, first.address, first.family);
    });
  };
}

/** The error for a destination the guard will not connect to. Names the host, nothing else. */
export function refused(host: string): WebhookError {
  return new WebhookError('network_error', `webhook destination ${host} is not allowed: it is not a public address`);
}

/**
 * The allow-list from `AGENT_HOOKS_WEBHOOK_ALLOW_NETWORKS` (comma-separated CIDRs; blanks ignored). An invalid
 * entry is a `configuration` error naming the variable and the entry's position, never its value (G7).
 */
export function parseAllowNetworks(env: NodeJS.ProcessEnv = process.env): string[] {
  const raw = env[ALLOW_NETWORKS_ENV];
  if (raw === undefined) return [];
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  const problem = allowNetworksProblem(entries);
  if (problem !== undefined) throw new WebhookError('configuration', `${ALLOW_NETWORKS_ENV}: ${problem}`);
  return entries;
}

/** `entry N is not a valid CIDR` for the first invalid entry, or `undefined`. */
export function allowNetworksProblem(entries: readonly string[]): string | undefined {
  const bad = entries.findIndex((entry) => !parseNetwork(entry));
  return bad === -1 ? undefined : `entry ${bad + 1} is not a valid CIDR`;
}

/**
 * A CIDR (`10.0.0.0/8`, `fd00::/8`) or a single address (a host route). IPv4 must be four-part decimal so
 * the list means what it says; an IPv4-mapped IPv6 network is stored as its IPv4 network, the same
 * canonical form addresses are checked in.
 */
function parseNetwork(entry: string): Network | undefined {
  const slash = entry.indexOf('/');
  const host = slash === -1 ? entry : entry.slice(0, slash);
  const prefixText = slash === -1 ? undefined : entry.slice(slash + 1);
  if (isIP(host) === 0) return undefined;
  const address = ipaddr.parse(host);
  const bits = address.kind() === 'ipv4' ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (prefix > bits) return undefined;
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() && prefix >= 96) {
    return [address.toIPv4Address(), prefix - 96];
  }
  return [address, prefix];
}

function inNetwork(address: Address, [network, prefix]: Network): boolean {
  if (address.kind() !== network.kind()) return false;
  return address.match(network, prefix);
}

/** Globally routable: ipaddr.js's `unicast` (no special-purpose range) and, for IPv6, inside 2000::/3. */
function isGlobal(address: Address): boolean {
  if (address.range() !== 'unicast') return false;
  return address.kind() === 'ipv4' || inNetwork(address, GLOBAL_UNICAST_V6);
}
