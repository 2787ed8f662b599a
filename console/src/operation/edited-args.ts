/**
 * The approval form's arguments (SPEC F6): the pending call's arguments as editable JSON. Unchanged, the
 * approval carries none (the model's run); changed, they go as `args` and the server checks them against
 * the tool's schema — its 400 names the path, and the page shows it.
 */

/** The text the form starts with. */
export function argsText(args: Readonly<Record<string, unknown>>): string {
  return JSON.stringify(args, null, 2);
}

/** The approval's body for the edited text, or why the text cannot be sent. */
export function approvalBody(text: string, original: Readonly<Record<string, unknown>>): { body: { action: 'approve'; args?: Record<string, unknown> } } | { problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { problem: 'The arguments are not valid JSON.' };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { problem: 'The arguments must be a JSON object.' };
  // Key order and spacing are not edits: compare the values.
  if (JSON.stringify(sorted(parsed)) === JSON.stringify(sorted(original))) return { body: { action: 'approve' } };
  return { body: { action: 'approve', args: parsed as Record<string, unknown> } };
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value === null || typeof value !== 'object') return value;
  const out = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(value).sort()) out[key] = sorted((value as Record<string, unknown>)[key]);
  return out;
}
