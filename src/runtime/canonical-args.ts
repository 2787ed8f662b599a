/**
 * Canonical arguments (SPEC F5, DESIGN §12): one text per value, whatever the order of object keys, so two
 * calls that differ only in key order are "the same call". Arrays keep their order (it is meaningful).
 */
export function canonicalArgs(value: unknown): string {
  return JSON.stringify(canonical(value)) ?? 'null';
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  // No prototype: a `__proto__` key from a model stays a plain key.
  const sorted = Object.create(null) as Record<string, unknown>;
  // Code-unit order: the same for every process and driver (no locale).
  for (const key of Object.keys(value).sort()) sorted[key] = canonical((value as Record<string, unknown>)[key]);
  return sorted;
}
