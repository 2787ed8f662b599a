/**
 * Which outgoing webhook headers a hook may set (W4, W6). Shared by the config-time check and the send-time
 * resolver, so a persisted config that bypassed the schema is still refused before anything is sent.
 */

/** RFC 9110 `token`: the only characters a header name may hold. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Hop-by-hop and framing headers the HTTP client owns (a hook setting them could smuggle a second request
 * or confuse the receiver about the body), `expect` (undici refuses it), and the browser-reserved
 * families `proxy-*` / `sec-*`.
 */
const FORBIDDEN = new Set([
  'host',
  'content-length',
  'connection',
  'transfer-encoding',
  'trailer',
  'upgrade',
  'keep-alive',
  'te',
  'expect',
]);
const FORBIDDEN_PREFIXES = ['proxy-', 'sec-'];

/**
 * W4: names that steer the transport. The Standard Webhooks headers are ours (signed per attempt), and QStash
 * reads every `Upstash-*` header as its own option (`Upstash-Callback`, `Upstash-Forward-*`, …).
 */
const TRANSPORT = new Set(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
const TRANSPORT_PREFIX = 'upstash-';

/** Characters allowed in a header value: HTAB, visible ASCII, space and obs-text (what undici accepts). */
const INVALID_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/;
const LINE_BREAK_OR_NUL = /[\r\n\0]/;

/**
 * A safe, printable rendering of a header *name* for error messages. Names are never secrets; quoting
 * escapes any control character so a message cannot be split into two log lines.
 */
export function headerLabel(name: string): string {
  return JSON.stringify(name);
}

/** Why a header name cannot be used, or `undefined` when it can. */
export function headerNameProblem(name: string): string | undefined {
  // `__proto__` would be swallowed by object copies instead of becoming a header.
  if (name === '__proto__' || !HEADER_NAME.test(name)) return 'is not a valid header name';
  const lower = name.toLowerCase();
  if (FORBIDDEN.has(lower) || FORBIDDEN_PREFIXES.some((prefix) => lower.startsWith(prefix))) {
    return 'is a forbidden header (set by the HTTP client, never by a hook)';
  }
  if (TRANSPORT.has(lower) || lower.startsWith(TRANSPORT_PREFIX)) {
    return 'is a transport header (W4: webhook-* signature headers and Upstash-* QStash options are never set by a hook)';
  }
  return undefined;
}

/** Why a header value cannot be sent, or `undefined` when it can. Never quotes the value. */
export function headerValueProblem(value: string): string | undefined {
  // One scan for the common, valid value (CR, LF and NUL are invalid characters too); the second regex
  // only picks the message.
  if (!INVALID_VALUE_CHAR.test(value)) return undefined;
  if (LINE_BREAK_OR_NUL.test(value)) return 'contains CR, LF or NUL';
  return 'contains a character not allowed in a header value';
}
