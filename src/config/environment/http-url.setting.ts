/**
 * Settings that hold an absolute http(s) base URL (`AGENT_HOOKS_APP_URL`, `QSTASH_URL`). Checked without
 * quoting the URL: a query string or user-info may carry a token.
 */
import type { EnvironmentSetting } from './environment-setting.js';

export function httpUrlProblem(value: string): string | undefined {
  // The WHATWG parser silently strips or re-reads these; a URL we accept never holds them.
  if ([...value].some((char) => char <= ' ' || char === '\x7f')) return 'must not contain whitespace or control characters';
  if (!/^https?:\/\//i.test(value)) return 'must be an absolute http(s) URL';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a valid URL';
  }
  if (url.hostname === '') return 'has no host';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials (user:password@)';
  return undefined;
}

export function httpUrlSetting(variable: string): EnvironmentSetting {
  return { variable, problem: httpUrlProblem };
}
