/**
 * The request bodies of DESIGN §7 as zod schemas (strict: an unknown field is a 400 naming it). The same
 * schemas describe the bodies in the OpenAPI document (`openapi-schemas.ts`).
 */
import { CLIENT_TOOL_LIMITS } from '../../runtime/tools/client-tools.js';
import { z } from 'zod';
import { AGENT_HOOK_POINTS } from '../../hooks/hook-points.js';
import { MAX_IDENTIFIER_LENGTH, MAX_METADATA_BYTES, MAX_PATTERN_LENGTH } from '../../hooks/input-limits.js';
import { PatternBudget } from '../../hooks/pattern-budget.js';

/** Owner, agent and hook ids are stored in 255-character columns (G6: one limit on both databases). */
const NAME_MAX = MAX_IDENTIFIER_LENGTH;

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
  matcher: text().max(MAX_PATTERN_LENGTH, { error: `must be at most ${MAX_PATTERN_LENGTH} characters` }).optional(),
  webhook: webhookField,
});

/** G6: one operation's matchers share one compiled-size budget; refused here before anything compiles. */
function chargeMatchers(hooks: readonly { matcher?: string | undefined }[], ctx: z.RefinementCtx): void {
  const budget = new PatternBudget();
  hooks.forEach((hook, index) => {
    if (hook.matcher === undefined) return;
    const problem = budget.charge(hook.matcher);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem, path: [index, 'matcher'] });
  });
}

/** G6: `context.metadata` at most 16 KB as JSON (the body's depth limit already ran, so stringify is safe). */
const metadataField = z.record(z.string(), z.unknown()).superRefine((metadata, ctx) => {
  if (Buffer.byteLength(JSON.stringify(metadata), 'utf8') > MAX_METADATA_BYTES) {
    ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_METADATA_BYTES} bytes as JSON` });
  }
});

export const createOperationBody = z.strictObject({
  agentId: name(),
  prompt: text(),
  hooks: z.array(callerHookBody).max(100, { error: 'at most 100 hooks per operation' }).superRefine(chargeMatchers).optional(),
  context: z
    .strictObject({
      // Accepted and replaced: `context.userId` is always the caller's owner id (B3).
      userId: z.unknown().optional(),
      organizationId: name().optional(),
      metadata: metadataField.optional(),
    })
    .optional(),
  // Checked in full (names, schemas, sizes, names taken) by the runtime as it creates the operation (G1).
  clientTools: z
    .array(
      z.unknown().meta({
        description: 'A client tool (DESIGN §6): { identifier, apiName, description, parameters (an object JSON Schema) }',
      }),
    )
    .max(CLIENT_TOOL_LIMITS.maxTools, { error: `at most ${CLIENT_TOOL_LIMITS.maxTools} client tools` })
    .meta({ description: "Tools the caller's own executor runs: offered when the agent's tools: selects them, always deferred (SPEC G1)." })
    .optional(),
});
export type CreateOperationBody = z.output<typeof createOperationBody>;

export const interventionBody = z.strictObject({
  action: z.enum(['approve', 'reject', 'rejectAndContinue']),
  reason: text().optional(),
  /** F6 (`approve` only): the arguments the call runs with; checked against the tool's schema by the runtime. */
  args: z.record(z.string(), z.unknown()).optional(),
});
export type InterventionBody = z.output<typeof interventionBody>;

export const toolResultBody = z.strictObject({
  content: text(),
  success: z.boolean().optional(),
});
export type ToolResultBody = z.output<typeof toolResultBody>;
