/** The agents the runtime can run, resolved from config (the `config/` room implements it). */
import type { ChatModel } from './models/chat-model.js';
import type { ModelRetrySettings } from './models/model-retry-policy.js';
import type { ToolPattern } from './tools/tool-pattern.js';

/** A `perTool` cap (SPEC F4): at most `max` calls of the tools `pattern` selects, in one operation. */
export interface PerToolCap {
  readonly pattern: ToolPattern;
  readonly max: number;
}

export interface AgentLimits {
  maxSteps: number;
  maxCostUsd?: number;
  compactAtTokens?: number;
  /** F4: input + output tokens over the operation's model calls. */
  maxTokens?: number;
  /** F4: tool calls the operation may run (calls G1 refused do not count). */
  maxToolCalls?: number;
  perTool?: readonly PerToolCap[];
  /** F5: identical calls failing in a row before the next one is refused. */
  maxRepeatedFailures: number;
}

/** How one model is called (K4): its retries and its per-attempt deadline. */
export interface ModelCallSettings {
  /** Default `DEFAULT_MODEL_RETRY` (three attempts in all). */
  retry?: ModelRetrySettings;
  timeoutMs?: number;
}

/** A model the agent falls back to (K4), named as traces name models (SPEC O1). */
export interface FallbackModel extends ModelCallSettings {
  name: string;
  provider: string;
  model: ChatModel;
}

export interface ResolvedAgent {
  id: string;
  model: ChatModel;
  /** What traces name the model (SPEC O1): `gen_ai.request.model` and `gen_ai.provider.name`. */
  modelInfo?: { name: string; provider: string };
  /** K4: the retries and deadline of `model`. */
  modelSettings?: ModelCallSettings;
  /** K4: tried in order once `model`'s attempts are spent, each with its own retries. */
  fallback?: readonly FallbackModel[];
  instructions?: string;
  /** Globs over `identifier/apiName` or `mcp:<server>`. */
  tools: readonly string[];
  /** Regexes over `identifier/apiName` (Runtime II). */
  approval: readonly string[];
  deferred: readonly string[];
  limits: AgentLimits;
  /** F3: the agent's `timeoutMs` — the deadline of its tool calls whose tool or MCP server sets none. */
  toolTimeoutMs?: number;
}

export interface AgentDirectory {
  agent(agentId: string): ResolvedAgent | undefined;
  /** `EngineContext.systemName` / `metadata`. */
  readonly systemName: string;
  readonly metadata: Readonly<Record<string, unknown>>;
}
export const AGENT_DIRECTORY = Symbol('nest-agent-hooks:AgentDirectory');

export const DEFAULT_MAX_STEPS = 10;
/** SPEC F5's default. */
export const DEFAULT_MAX_REPEATED_FAILURES = 3;
