/** The agents the runtime can run, resolved from config (the `config/` room implements it). */
import type { ChatModel } from './models/chat-model.js';

export interface AgentLimits {
  maxSteps: number;
  maxCostUsd?: number;
  compactAtTokens?: number;
}

export interface ResolvedAgent {
  id: string;
  model: ChatModel;
  /** What traces name the model (SPEC O1): `gen_ai.request.model` and `gen_ai.provider.name`. */
  modelInfo?: { name: string; provider: string };
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
