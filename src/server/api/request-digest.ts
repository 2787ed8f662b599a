/**
 * G8: the digest an idempotency key is stored with — SHA-256 of the body as canonical JSON (object keys
 * sorted, no whitespace), so a retry that only reorders keys or spacing is the same request. Runs after the
 * body's depth limit (64), so the recursion here is shallow.
 */
import { createHash } from 'node:crypto';

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  // Parsed JSON holds only strings, numbers, booleans and null here.
  return JSON.stringify(value) ?? 'null';
}

/** Hex SHA-256 of the canonical JSON of a parsed request body. */
export function requestDigest(body: unknown): string {
  return createHash('sha256').update(canonical(body)).digest('hex');
}
