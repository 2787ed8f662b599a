/**
 * Webhook URL rules (W4): an absolute http(s) URL without credentials, or an app-relative
 * `/path` resolved against the app URL. Problems are described without quoting the URL: query strings
 * often carry tokens.
 */

/** Where an app-relative URL is resolved when no `webhooks.appUrl` option is given. */
export const APP_URL_ENV = 'AGENT_HOOKS_APP_URL';

export type UrlResolution = { readonly url: string } | { readonly problem: string };

/** Whitespace and control characters: the WHATWG parser would silently strip or re-read them. */
function hasControlOrSpace(raw: string): boolean {
  for (let i = 0; i < raw.length; i++) {
    const code = raw.charCodeAt(i);
    if (code <= 0x20 || code === 0x7f) return true;
  }
  return false;
}
const HTTP_SCHEME = /^https?:\/\//i;

/** An absolute http(s) URL, normalized, or why it is not acceptable. */
function absolute(raw: string): UrlResolution {
  if (!HTTP_SCHEME.test(raw)) return { problem: 'must be an absolute http(s) URL or an app-relative /path' };
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return { problem: 'is not a valid URL' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { problem: 'must use http or https' };
  // Credentials in a URL end up in logs and proxies; headers templates are the place for secrets (W6).
  if (parsed.username !== '' || parsed.password !== '') return { problem: 'must not contain credentials (user:password@)' };
  if (parsed.hostname === '') return { problem: 'has no host' };
  return { url: parsed.href };
}

/** Characters no URL we accept may hold, before any parsing. */
function rawProblem(raw: string): string | undefined {
  if (raw.length === 0) return 'must not be empty';
  // Special schemes read `\` as `/`: `/\evil.example` would resolve to another host.
  if (raw.includes('\\')) return 'must not contain backslashes';
  if (hasControlOrSpace(raw)) return 'must not contain whitespace or control characters';
  return undefined;
}

/** An app-relative `/path` (not `//host`): stored as given, resolved by whichever process sends (W4). */
export function isAppRelative(raw: string): boolean {
  return raw.startsWith('/') && !raw.startsWith('//');
}

/**
 * Validates `raw` and resolves an app-relative `/path` against `appUrl`. The result stays on the app's
 * origin: a path can never name another host.
 */
export function resolveWebhookUrl(raw: unknown, appUrl: string | undefined): UrlResolution {
  if (typeof raw !== 'string') return { problem: 'must be a string' };
  const problem = rawProblem(raw);
  if (problem) return { problem };
  if (raw.startsWith('//')) return { problem: 'must not be protocol-relative (//host); use an absolute http(s) URL' };
  if (!raw.startsWith('/')) return absolute(raw);

  if (appUrl === undefined || appUrl === '') {
    return { problem: `is app-relative but no app URL is configured (webhooks.appUrl or ${APP_URL_ENV})` };
  }
  const baseProblem = rawProblem(appUrl);
  const base = baseProblem ? { problem: baseProblem } : absolute(appUrl);
  if ('problem' in base) return { problem: `is app-relative but the app URL (webhooks.appUrl or ${APP_URL_ENV}) ${base.problem}` };
  const origin = new URL(base.url).origin;
  const resolved = new URL(raw, base.url);
  if (resolved.origin !== origin) return { problem: 'must stay on the app URL origin' };
  return { url: resolved.href };
}
