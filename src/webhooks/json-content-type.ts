/**
 * Webhook bodies are JSON: `content-type: application/json` goes with every post unless the hook
 * configured a content type of its own, which is kept.
 */
export const JSON_CONTENT_TYPE = 'application/json';

/** Whether `headers` already name a content type (header names are case-insensitive). */
export function hasContentType(headers: Readonly<Record<string, string>>): boolean {
  for (const name of Object.keys(headers)) {
    // The length first: lower-casing every header name at every send showed in profiles.
    if (name.length === 12 && name.toLowerCase() === 'content-type') return true;
  }
  return false;
}
