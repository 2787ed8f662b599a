/**
 * The request bodies of DESIGN §7 as zod schemas (strict: an unknown field is a 400 naming it). The same
 * schemas describe the bodies in the OpenAPI document (`openapi-schemas.ts`).
 */
import { z } from 'zod';
import { AGENT_HOOK_POINTS } from '../../hooks/hook-points.js';

/** Owner, agent and hook ids are stored in 255-character columns. */
const NAME_MAX = 255;

/** PostgreSQL text cannot hold U+0000: refused here so no caller string can turn into a database error. */
const text = () => z.string().refine((value) => !value.includes('\u0000'), { error: 'must not contain NUL characters' });
const name = () => text().min(1, { error: 'must not be empty' }).max(NAME_MAX, { error: `must be at most ${NAME_MAX} characters` });

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The webhook as the caller sent it: only "an object" here, the W4 schema (and the SSRF-relevant URL
 * rules) run when the runtime registers the hook, exactly as for a hook given to `execAgent` in code.
 * `z.custom` keeps the caller's object itself, so the runtime validates what was sent, not a copy.
 */
export const webhookField = z
  .custom<Record<string, unknown>>(isPlainObject, { error: (issue) => (issue.input === undefined ? 'Required' : 'must be an object') })
  .meta({ description: 'The webhook configuration (SPEC W4).' });

/** A caller hook over HTTP is webhook-only: `{ id, type, matcher?, webhook }` (A4 without `handler`). */
export const callerHookBody = z.strictObject({
  id: name(),
  type: z.enum(AGENT_HOOK_POINTS as [string, ...string[]]),
  matcher: text().optional(),
  webhook: webhookField,
});

export const createOperationBody = z.strictObject({
  agentId: name(),
  prompt: text(),
  hooks: z.array(callerHookBody).max(100, { error: 'at most 100 hooks per operation' }).optional(),
  context: z
    .strictObject({
      // Accepted and replaced: `context.userId` is always the caller's owner id (B3).
      userId: z.unknown().optional(),
      organizationId: name().optional(),
      metadata: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
});
export type CreateOperationBody = z.output<typeof createOperationBody>;

export const interventionBody = z.strictObject({
  action: z.enum(['approve', 'reject', 'rejectAndContinue']),
  reason: text().optional(),
});
export type InterventionBody = z.output<typeof interventionBody>;

export const toolResultBody = z.strictObject({
  content: text(),
  success: z.boolean().optional(),
});
export type ToolResultBody = z.output<typeof toolResultBody>;
