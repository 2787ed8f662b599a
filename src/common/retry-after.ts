/**
 * `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date. A receiver that is rate limiting or
 * down for maintenance says when to come back; queued webhook deliveries and retried model calls (K4)
 * wait at least that long.
 */

/** Milliseconds to wait from `nowMs`, or `undefined` when the header is missing or malformed. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  // An HTTP-date (IMF-fixdate or the obsolete RFC 850 form) starts with a weekday and ends in GMT; anything
  // else (a signed or fractional number, a free-form date) is malformed rather than guessed at.
  if (!/^[A-Za-z]{3,9}, .+ GMT$/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
