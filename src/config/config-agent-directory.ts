/**
 * The runtime's `AgentDirectory` over a loaded agents.yaml: one model instance per model id, shared by
 * the agents that use it, closed at shutdown.
 */
import type { AgentDirectory, ResolvedAgent } from '../runtime/agent-directory.port.js';
import { DEFAULT_MAX_STEPS } from '../runtime/agent-directory.port.js';
import type { ChatModel } from '../runtime/models/chat-model.js';
import { createChatModel } from '../runtime/models/create-chat-model.js';
import type { ModelConfig } from '../runtime/models/model-config.js';
import type { AgentsConfig } from './agents-config.js';

export class ConfigAgentDirectory implements AgentDirectory {
  private readonly agents = new Map<string, ResolvedAgent>();
  private readonly models = new Map<string, ChatModel>();
  readonly systemName: string;
  readonly metadata: Readonly<Record<string, unknown>>;

  constructor(readonly config: AgentsConfig) {
    this.systemName = config.system;
    this.metadata = Object.freeze({ ...(config.metadata ?? {}) });
    for (const [modelId, entry] of Object.entries(config.models)) this.models.set(modelId, createChatModel(entry as ModelConfig));
    for (const [agentId, entry] of Object.entries(config.agents)) {
      this.agents.set(agentId, {
        id: agentId,
        model: this.models.get(entry.model)!, // the loader checked the reference
        modelInfo: modelInfo(entry.model, config.models[entry.model] as ModelConfig),
        ...(entry.instructions !== undefined ? { instructions: entry.instructions } : {}),
        tools: entry.tools ?? [],
        approval: entry.approval ?? [],
        deferred: entry.deferred ?? [],
        ...(entry.timeoutMs !== undefined ? { toolTimeoutMs: entry.timeoutMs } : {}),
        limits: {
          maxSteps: entry.limits?.maxSteps ?? DEFAULT_MAX_STEPS,
          ...(entry.limits?.maxCostUsd !== undefined ? { maxCostUsd: entry.limits.maxCostUsd } : {}),
          ...(entry.limits?.compactAtTokens !== undefined ? { compactAtTokens: entry.limits.compactAtTokens } : {}),
        },
      });
    }
  }

  agent(agentId: string): ResolvedAgent | undefined {
    return this.agents.get(agentId);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.models.values()].map(async (model) => model.close?.()));
  }
}

/** The provider's model name for an OpenAI-compatible model, the config's model id for a scripted one. */
function modelInfo(modelId: string, entry: ModelConfig): { name: string; provider: string } {
  return entry.provider === 'openai' ? { name: entry.model, provider: 'openai' } : { name: modelId, provider: entry.provider };
}
