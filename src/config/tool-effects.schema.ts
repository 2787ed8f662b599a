/**
 * The tool-effect settings of agents.yaml (SPEC F2, F3; DESIGN §12): `idempotent`, `timeoutMs` and `retry`
 * on an MCP server and on its per-tool overrides (`tools: { lookup: { idempotent: true, retry: { attempts: 3 } } }`),
 * `timeoutMs` on an agent. A `retry` that would reach a tool not declared idempotent is an error at the key
 * that brings it. Bounds are the ones `@Tool` is held to (runtime/tools/tool-effects.ts).
 */
import { z } from 'zod';
import { MAX_RETRY_ATTEMPTS, MAX_RETRY_DELAY_MS, MAX_TOOL_TIMEOUT_MS, RETRY_NOT_IDEMPOTENT } from '../runtime/tools/tool-effects.js';

/** F3: a deadline in milliseconds; negative, zero, fractional or beyond a day is refused. */
export const toolTimeoutSchema = z
  .number()
  .int({ error: 'must be an integer (milliseconds)' })
  .min(1, { error: 'must be at least 1 (milliseconds)' })
  .max(MAX_TOOL_TIMEOUT_MS, { error: `must be at most ${MAX_TOOL_TIMEOUT_MS} (milliseconds, one day)` });

const delay = z
  .number()
  .int({ error: 'must be an integer (milliseconds)' })
  .min(0, { error: 'must be at least 0' })
  .max(MAX_RETRY_DELAY_MS, { error: `must be at most ${MAX_RETRY_DELAY_MS} (milliseconds)` });

const retrySchema = z.strictObject({
  attempts: z.number().int({ error: 'must be an integer' }).min(1, { error: 'must be at least 1' }).max(MAX_RETRY_ATTEMPTS, { error: `must be at most ${MAX_RETRY_ATTEMPTS}` }),
  initialDelayMs: delay.optional(),
  maxDelayMs: delay.optional(),
});

/** The fields every level that declares effects shares. */
export const toolEffectFields = {
  idempotent: z.boolean().optional(),
  timeoutMs: toolTimeoutSchema.optional(),
  retry: retrySchema.optional(),
};

const toolOverrideSchema = z.strictObject(toolEffectFields);

/** `tools:` of an MCP server: overrides by the tool's MCP name. */
export const mcpToolOverridesSchema = z.record(z.string().min(1, { error: 'must be a tool name' }), toolOverrideSchema).optional();

interface ServerEffects {
  idempotent?: boolean | undefined;
  retry?: unknown;
  tools?: Record<string, { idempotent?: boolean | undefined; retry?: unknown }> | undefined;
}

/** F3: `retry` only where the tool it reaches is idempotent — the server's own, or a tool's override. */
export function checkRetryOnIdempotent(server: ServerEffects, ctx: z.RefinementCtx): void {
  if (server.retry !== undefined && server.idempotent !== true) ctx.addIssue({ code: 'custom', message: RETRY_NOT_IDEMPOTENT, path: ['retry'] });
  for (const [name, tool] of Object.entries(server.tools ?? {})) {
    const idempotent = tool.idempotent ?? server.idempotent;
    if (tool.retry !== undefined && idempotent !== true) ctx.addIssue({ code: 'custom', message: RETRY_NOT_IDEMPOTENT, path: ['tools', name, 'retry'] });
    else if (tool.retry === undefined && server.retry !== undefined && tool.idempotent === false) {
      ctx.addIssue({ code: 'custom', message: "a tool that is not idempotent cannot inherit the server's retry (SPEC F3)", path: ['tools', name, 'idempotent'] });
    }
  }
}
