/**
 * The shape of `config/agents.yaml` (DESIGN §8) with zod, strict everywhere: an unknown key is an error,
 * not a silently ignored typo. Rules that need the whole file (references between sections) are in
 * `agents-config.references.ts`. `hooks:` is accepted as raw data here; the engine-config work validates
 * it (with plugins and the secret scan) through the seam in `agents-config.ts`.
 * Every message here is fixed text: none quotes the value it rejects.
 */
import { RE2JS } from 're2js';
import { z } from 'zod';
import type { ModelConfig } from '../runtime/models/model-config.js';
import { perToolPatternProblems, toolPatternProblem } from './tool-patterns.js';
import { PatternBudget, patternLimitProblem } from '../hooks/pattern-budget.js';
import { ArgumentValidator } from '../runtime/tools/argument-validator.js';
import { CLIENT_TOOL_LIMITS } from '../runtime/tools/client-tools.js';
import { checkRetryOnIdempotent, mcpToolOverridesSchema, toolEffectFields, toolTimeoutSchema } from './tool-effects.schema.js';

/** Ids of models, agents and MCP servers: they appear in URLs, tool identifiers and function names. */
export const CONFIG_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const ENV_VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** 2^31 − 1 ms, the longest timer Node can arm, in seconds. */
const MAX_TIMEOUT_SECONDS = 2_147_483.647;
const MAX_TIMER_MS = 2_147_483_647;
/** K4: attempts of one model in all; more would only hold a step on a provider that is down. */
const MAX_MODEL_ATTEMPTS = 10;

const id = z.string().regex(CONFIG_ID, { error: 'must be an id: letters, digits, "_" and "-", starting with a letter or digit, at most 64 characters' });
const envVarName = z.string().regex(ENV_VAR_NAME, { error: 'must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)' });
const nonNegative = z.number().nonnegative({ error: 'must be a number ≥ 0' });
const nonEmpty = z.string().min(1, { error: 'must be a non-empty string' });
const delayMs = z
  .number()
  .int({ error: 'must be an integer number of milliseconds' })
  .nonnegative({ error: 'must be ≥ 0 ms' })
  .max(MAX_TIMER_MS, { error: `must be at most ${MAX_TIMER_MS} ms` });

/** Like tool matchers (hooks/matcher.ts): `''` and `*` match every tool; the rest must compile on re2js. */
const toolRegex = z.string().superRefine((pattern, ctx) => {
  if (pattern === '' || pattern === '*') return;
  // G6: length and compiled size from the text, before re2js pays for a huge program.
  const limit = patternLimitProblem(pattern);
  if ('problem' in limit) {
    ctx.addIssue({ code: 'custom', message: limit.problem });
    return;
  }
  try {
    RE2JS.compile(pattern);
  } catch (error) {
    // re2js's `error` is the reason alone; its message would quote the pattern.
    const reason = (error as { error?: unknown }).error;
    ctx.addIssue({ code: 'custom', message: `invalid regular expression${typeof reason === 'string' ? ` (${reason})` : ''}` });
  }
});

const toolPattern = z.string().superRefine((pattern, ctx) => {
  const problem = toolPatternProblem(pattern);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

const scriptedToolCallSchema = z.strictObject({
  identifier: nonEmpty,
  apiName: nonEmpty,
  args: z.record(z.string(), z.unknown()).optional(),
});

/** K4: how often a model is tried and how long the waits between attempts may grow. */
const retrySchema = z
  .strictObject({
    attempts: z.number().int({ error: 'must be an integer' }).min(1, { error: 'must be at least 1' }).max(MAX_MODEL_ATTEMPTS, { error: `must be at most ${MAX_MODEL_ATTEMPTS}` }).optional(),
    initialDelayMs: delayMs.optional(),
    maxDelayMs: delayMs.optional(),
  })
  .superRefine((retry, ctx) => {
    if (retry.initialDelayMs !== undefined && retry.maxDelayMs !== undefined && retry.initialDelayMs > retry.maxDelayMs) {
      ctx.addIssue({ code: 'custom', message: 'must not be greater than maxDelayMs', path: ['initialDelayMs'] });
    }
  });

/** K4: one attempt's deadline. */
const timeoutMs = z
  .number()
  .int({ error: 'must be an integer number of milliseconds' })
  .positive({ error: 'must be greater than 0 ms' })
  .max(MAX_TIMER_MS, { error: `must be at most ${MAX_TIMER_MS} ms` });

const scriptedModelSchema = z.strictObject({
  provider: z.literal('scripted'),
  retry: retrySchema.optional(),
  timeoutMs: timeoutMs.optional(),
  costPerTokenUsd: nonNegative.optional(),
  script: z.array(z.strictObject({ content: z.string().optional(), toolCalls: z.array(scriptedToolCallSchema).optional() })),
});

const openAiModelSchema = z.strictObject({
  provider: z.literal('openai'),
  model: nonEmpty,
  retry: retrySchema.optional(),
  timeoutMs: timeoutMs.optional(),
  baseUrlEnv: envVarName.optional(),
  apiKeyEnv: envVarName.optional(),
  costPerInputTokenUsd: nonNegative.optional(),
  costPerOutputTokenUsd: nonNegative.optional(),
  timeoutSeconds: z
    .number()
    .positive({ error: 'must be greater than 0 seconds' })
    .max(MAX_TIMEOUT_SECONDS, { error: `must be at most ${MAX_TIMEOUT_SECONDS} seconds` })
    .optional(),
}).superRefine((model, ctx) => {
  if (model.timeoutMs !== undefined && model.timeoutSeconds !== undefined) {
    ctx.addIssue({ code: 'custom', message: 'give timeoutMs or timeoutSeconds, not both', path: ['timeoutMs'] });
  }
});

/** DESIGN §12: names a model given in code; the module checks the name when it builds the agents. */
const codeModelSchema = z.strictObject({
  provider: z.literal('code'),
  name: nonEmpty,
  retry: retrySchema.optional(),
  timeoutMs: timeoutMs.optional(),
});

export const modelSchema = z.discriminatedUnion('provider', [scriptedModelSchema, openAiModelSchema, codeModelSchema]);

const mcpServerSchema = z.strictObject({
  url: z.string().superRefine((raw, ctx) => {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be an absolute http(s) URL' });
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: 'must be an absolute http(s) URL' });
    // Credentials belong in headers added by a `before_mcp_request` hook, never in the config file.
    else if (url.username !== '' || url.password !== '') ctx.addIssue({ code: 'custom', message: 'must not embed credentials' });
  }),
  // F2, F3: the server's tools' effects, and per-tool overrides.
  ...toolEffectFields,
  tools: mcpToolOverridesSchema,
}).superRefine(checkRetryOnIdempotent);

/** A `clientTools:` key: `identifier/apiName`, each half as for `@Tool` (DESIGN §8). */
const CLIENT_TOOL_NAME = new RegExp(`^[A-Za-z0-9_.-]{1,${CLIENT_TOOL_LIMITS.maxNameLength}}/[A-Za-z0-9_.-]{1,${CLIENT_TOOL_LIMITS.maxNameLength}}$`);

/** One validator for the file: schemas are compiled strictly, as `@Tool` schemas are at bootstrap. */
const schemaValidator = new ArgumentValidator();

const clientToolSchema = z.strictObject({
  description: z.string().max(CLIENT_TOOL_LIMITS.maxDescriptionLength, { error: `must be at most ${CLIENT_TOOL_LIMITS.maxDescriptionLength} characters` }),
  parameters: z.record(z.string(), z.unknown()).superRefine((schema, ctx) => {
    if (schema.type !== 'object') {
      ctx.addIssue({ code: 'custom', message: 'must be an object schema (type: object)' });
      return;
    }
    try {
      schemaValidator.compileStrict(schema);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'is not a valid JSON Schema' });
    }
  }),
});

const positiveInteger = z.number().int({ error: 'must be an integer' }).positive({ error: 'must be at least 1' });
const countOrZero = z.number().int({ error: 'must be an integer' }).nonnegative({ error: 'must be at least 0' });

/**
 * F4 `perTool: { <tool glob>: n }`. Keys are patterns, so every problem is reported at `perTool` by entry
 * number: a path quoting the key would echo the pattern (G6: never the value, whatever its length).
 */
const perToolSchema = z.record(z.string(), z.unknown()).transform((caps, ctx) => {
  const entries = Object.entries(caps);
  for (const problem of perToolPatternProblems(entries.map(([pattern]) => pattern))) ctx.addIssue({ code: 'custom', message: problem });
  entries.forEach(([, max], index) => {
    if (!countOrZero.safeParse(max).success) ctx.addIssue({ code: 'custom', message: `entry ${index + 1}: the cap must be an integer ≥ 0` });
  });
  return entries.map(([pattern, max]) => ({ pattern, max: max as number }));
});

const limitsSchema = z.strictObject({
  maxSteps: positiveInteger.optional(),
  maxCostUsd: z.number().positive({ error: 'must be greater than 0' }).optional(),
  compactAtTokens: positiveInteger.optional(),
  maxTokens: positiveInteger.optional(),
  maxToolCalls: countOrZero.optional(),
  perTool: perToolSchema.optional(),
  maxRepeatedFailures: positiveInteger.optional(),
});

const agentSchema = z.strictObject({
  model: z.string(),
  /** K4: models tried in order once `model`'s attempts are spent (references checked with the whole file). */
  fallback: z.array(z.string()).optional(),
  instructions: z.string().optional(),
  tools: z.array(toolPattern).optional(),
  approval: z.array(toolRegex).optional(),
  deferred: z.array(toolRegex).optional(),
  limits: limitsSchema.optional(),
  /** F3: the deadline of the agent's tool calls whose tool or MCP server sets none. */
  timeoutMs: toolTimeoutSchema.optional(),
}).superRefine(chargeAgentPatterns);

/** G6: one agent's `approval` and `deferred` patterns share one compiled-size budget. */
function chargeAgentPatterns(agent: { approval?: string[] | undefined; deferred?: string[] | undefined }, ctx: z.RefinementCtx): void {
  const budget = new PatternBudget();
  for (const key of ['approval', 'deferred'] as const) {
    for (const [index, pattern] of (agent[key] ?? []).entries()) {
      // Each pattern's own limits are reported by `toolRegex`; here only the first pattern over the shared budget.
      if ('problem' in patternLimitProblem(pattern)) continue;
      const problem = budget.charge(pattern);
      if (problem !== undefined) {
        ctx.addIssue({ code: 'custom', message: problem, path: [key, index] });
        return;
      }
    }
  }
}

export const agentsConfigSchema = z.strictObject({
  system: nonEmpty,
  metadata: z.record(z.string(), z.unknown()).default({}),
  models: z.record(id, modelSchema).default({}),
  mcpServers: z.record(id, mcpServerSchema).default({}),
  clientTools: z
    .record(z.string().regex(CLIENT_TOOL_NAME, { error: 'must be a tool name "identifier/apiName" (letters, digits, "_", "." and "-")' }), clientToolSchema)
    .refine((tools) => Object.keys(tools).length <= CLIENT_TOOL_LIMITS.maxTools, { error: `at most ${CLIENT_TOOL_LIMITS.maxTools} client tools` })
    .default({}),
  agents: z.record(id, agentSchema).default({}),
  hooks: z.unknown().optional(),
});

/** Fails to compile if the schema and the providers' config types ever disagree. */
type Fits<T extends ModelConfig> = T;
export type ModelEntry = Fits<z.output<typeof modelSchema>>;
export type McpServerEntry = z.output<typeof mcpServerSchema>;
export type ClientToolEntry = z.output<typeof clientToolSchema>;
export type AgentEntry = z.output<typeof agentSchema>;
export type AgentLimitsEntry = z.output<typeof limitsSchema>;
export type AgentsConfigBody = z.output<typeof agentsConfigSchema>;
