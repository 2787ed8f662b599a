/**
 * Parses request input with a zod schema; a failure is a 400 naming every bad field (`agentId: Required`,
 * `hooks[0].webhook: Required`). Messages come from zod and name types and options, never the input.
 */
import type { z } from 'zod';
import { invalidRequest } from './api-error.js';

type Issue = z.core.$ZodIssue;

/** `hooks[0].webhook.url`; odd keys quoted so a message stays one printable line. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else {
      const name = String(key);
      out += /^[A-Za-z_$][\w$-]*$/.test(name) ? `${out ? '.' : ''}${name}` : `[${JSON.stringify(name)}]`;
    }
  }
  return out;
}

function describe(issue: Issue, root: string): string[] {
  const at = fieldPath(issue.path) || root;
  if (issue.code === 'unrecognized_keys') {
    // One line per key, each naming the field itself: `hooks[0].handler: is not allowed`.
    return issue.keys.map((key) => `${fieldPath([...issue.path, key])}: ${key === 'handler' ? 'is not accepted over HTTP (caller hooks are webhook-only)' : 'is not allowed'}`);
  }
  return [`${at}: ${issue.message}`];
}

/** zod's messages for a missing field speak of types or options; `Required` says it. */
const requiredMessage = (issue: z.core.$ZodRawIssue): string | undefined =>
  issue.input === undefined && issue.code !== 'unrecognized_keys' ? 'Required' : undefined;

/** The parsed value, or an `ApiError` 400 listing every issue; `root` names the input when a path is empty. */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, root = 'body'): z.output<S> {
  const parsed = schema.safeParse(value, { error: requiredMessage });
  if (parsed.success) return parsed.data;
  throw invalidRequest(parsed.error.issues.flatMap((issue) => describe(issue, root)).join('; '));
}
