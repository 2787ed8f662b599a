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
import { toolPatternProblem } from './tool-patterns.js';

/** Ids of models, agents and MCP servers: they appear in URLs, tool identifiers and function names. */
export const CONFIG_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const ENV_VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** 2^31 − 1 ms, the longest timer Node can arm, in seconds. */
const MAX_TIMEOUT_SECONDS = 2_147_483.647;

const id = z.string().regex(CONFIG_ID, { error: 'must be an id: letters, digits, "_" and "-", starting with a letter or digit, at most 64 characters' });
const envVarName = z.string().regex(ENV_VAR_NAME, { error: 'must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)' });
const nonNegative = z.number().nonnegative({ error: 'must be a number ≥ 0' });
const nonEmpty = z.string().min(1, { error: 'must be a non-empty string' });

/** Like tool matchers (hooks/matcher.ts): `''` and `*` match every tool; the rest must compile on re2js. */
const toolRegex = z.string().superRefine((pattern, ctx) => {
  if (pattern === '' || pattern === '*') return;
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

const scriptedModelSchema = z.strictObject({
  provider: z.literal('scripted'),
  costPerTokenUsd: nonNegative.optional(),
  script: z.array(z.strictObject({ content: z.string().optional(), toolCalls: z.array(scriptedToolCallSchema).optional() })),
});

const openAiModelSchema = z.strictObject({
  provider: z.literal('openai'),
  model: nonEmpty,
  baseUrlEnv: envVarName.optional(),
  apiKeyEnv: envVarName.optional(),
  costPerInputTokenUsd: nonNegative.optional(),
  costPerOutputTokenUsd: nonNegative.optional(),
  timeoutSeconds: z
    .number()
    .positive({ error: 'must be greater than 0 seconds' })
    .max(MAX_TIMEOUT_SECONDS, { error: `must be at most ${MAX_TIMEOUT_SECONDS} seconds` })
    .optional(),
});

export const modelSchema = z.discriminatedUnion('provider', [scriptedModelSchema, openAiModelSchema]);

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
});

const limitsSchema = z.strictObject({
  maxSteps: z.number().int({ error: 'must be an integer' }).positive({ error: 'must be at least 1' }).optional(),
  maxCostUsd: z.number().positive({ error: 'must be greater than 0' }).optional(),
  compactAtTokens: z.number().int({ error: 'must be an integer' }).positive({ error: 'must be at least 1' }).optional(),
});

const agentSchema = z.strictObject({
  model: z.string(),
  instructions: z.string().optional(),
  tools: z.array(toolPattern).optional(),
  approval: z.array(toolRegex).optional(),
  deferred: z.array(toolRegex).optional(),
  limits: limitsSchema.optional(),
});

export const agentsConfigSchema = z.strictObject({
  system: nonEmpty,
  metadata: z.record(z.string(), z.unknown()).default({}),
  models: z.record(id, modelSchema).default({}),
  mcpServers: z.record(id, mcpServerSchema).default({}),
  agents: z.record(id, agentSchema).default({}),
  hooks: z.unknown().optional(),
});

/** Fails to compile if the schema and the providers' config types ever disagree. */
type Fits<T extends ModelConfig> = T;
export type ModelEntry = Fits<z.output<typeof modelSchema>>;
export type McpServerEntry = z.output<typeof mcpServerSchema>;
export type AgentEntry = z.output<typeof agentSchema>;
export type AgentLimitsEntry = z.output<typeof limitsSchema>;
export type AgentsConfigBody = z.output<typeof agentsConfigSchema>;
