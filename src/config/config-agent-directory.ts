/**
 * The runtime's `AgentDirectory` over a loaded agents.yaml: one model instance per model id, shared by
 * the agents that use it, closed at shutdown — except models given in code (DESIGN §12), which the host
 * built and closes.
 */
import type { AgentDirectory, ModelCallSettings, ResolvedAgent } from '../runtime/agent-directory.port.js';
import { DEFAULT_MAX_REPEATED_FAILURES, DEFAULT_MAX_STEPS, type AgentLimits } from '../runtime/agent-directory.port.js';
import type { ChatModel } from '../runtime/models/chat-model.js';
import type { CodeModels } from '../runtime/models/code-models.js';
import { createChatModel } from '../runtime/models/create-chat-model.js';
import type { ModelConfig } from '../runtime/models/model-config.js';
import { retrySettings } from '../runtime/models/model-retry-policy.js';
import { compileToolPattern } from '../runtime/tools/tool-pattern.js';
import type { AgentsConfig } from './agents-config.js';
import type { AgentLimitsEntry } from './agents-config.schema.js';
import { AgentsConfigError, shownEntry } from './config-error.js';

export class ConfigAgentDirectory implements AgentDirectory {
  private readonly agents = new Map<string, ResolvedAgent>();
  private readonly models = new Map<string, ChatModel>();
  /** The models this directory built, which it closes (not the host's code models). */
  private readonly owned: ChatModel[] = [];
  readonly systemName: string;
  readonly metadata: Readonly<Record<string, unknown>>;

  constructor(readonly config: AgentsConfig, codeModels: CodeModels = {}) {
    this.systemName = config.system;
    this.metadata = Object.freeze({ ...(config.metadata ?? {}) });
    checkCodeModelNames(config, codeModels);
    for (const [modelId, entry] of Object.entries(config.models)) {
      const model = createChatModel(entry as ModelConfig, { codeModels });
      this.models.set(modelId, model);
      if (entry.provider !== 'code') this.owned.push(model);
    }
    for (const [agentId, entry] of Object.entries(config.agents)) {
      this.agents.set(agentId, {
        id: agentId,
        model: this.models.get(entry.model)!, // the loader checked the reference
        modelInfo: modelInfo(entry.model, config.models[entry.model] as ModelConfig),
        modelSettings: callSettings(config.models[entry.model] as ModelConfig),
        // K4: the loader checked each reference and that none repeats.
        ...(entry.fallback && entry.fallback.length > 0
          ? { fallback: entry.fallback.map((modelId) => ({ ...modelInfo(modelId, config.models[modelId] as ModelConfig), model: this.models.get(modelId)!, ...callSettings(config.models[modelId] as ModelConfig) })) }
          : {}),
        ...(entry.instructions !== undefined ? { instructions: entry.instructions } : {}),
        tools: entry.tools ?? [],
        approval: entry.approval ?? [],
        deferred: entry.deferred ?? [],
        ...(entry.timeoutMs !== undefined ? { toolTimeoutMs: entry.timeoutMs } : {}),
        limits: agentLimits(entry.limits),
      });
    }
  }

  agent(agentId: string): ResolvedAgent | undefined {
    return this.agents.get(agentId);
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.owned.map(async (model) => model.close?.()));
  }
}

/** DESIGN §12: every `provider: code` entry names a model given in code; else file, line and key. */
function checkCodeModelNames(config: AgentsConfig, codeModels: CodeModels): void {
  const issues = Object.entries(config.models).flatMap(([modelId, entry]) => {
    if (entry.provider !== 'code' || Object.hasOwn(codeModels, entry.name)) return [];
    const path = ['models', modelId, 'name'];
    const shown = shownEntry(entry.name);
    return [{ file: config.source.file, line: config.source.lineOf(path), path: `models.${modelId}.name`, ...(shown !== undefined ? { entry: shown } : {}), message: 'names no model given in code (AgentHooksModule.forRoot({ models }))' }];
  });
  if (issues.length > 0) throw new AgentsConfigError(issues);
}

/** K4: the model's retries (each unset field from the default) and its per-attempt deadline. */
function callSettings(entry: ModelConfig): ModelCallSettings {
  return { retry: retrySettings(entry.retry), ...(entry.timeoutMs !== undefined ? { timeoutMs: entry.timeoutMs } : {}) };
}

/** An agent's `limits:` with their defaults; `perTool` patterns compiled once, by the one tool matcher (F4). */
function agentLimits(entry: AgentLimitsEntry | undefined): AgentLimits {
  return {
    maxSteps: entry?.maxSteps ?? DEFAULT_MAX_STEPS,
    maxRepeatedFailures: entry?.maxRepeatedFailures ?? DEFAULT_MAX_REPEATED_FAILURES,
    ...(entry?.maxCostUsd !== undefined ? { maxCostUsd: entry.maxCostUsd } : {}),
    ...(entry?.compactAtTokens !== undefined ? { compactAtTokens: entry.compactAtTokens } : {}),
    ...(entry?.maxTokens !== undefined ? { maxTokens: entry.maxTokens } : {}),
    ...(entry?.maxToolCalls !== undefined ? { maxToolCalls: entry.maxToolCalls } : {}),
    ...(entry?.perTool && entry.perTool.length > 0 ? { perTool: entry.perTool.map(({ pattern, max }) => ({ pattern: compileToolPattern(pattern), max })) } : {}),
  };
}

/** The provider's model name for an OpenAI-compatible model, the config's model id for a scripted one. */
function modelInfo(modelId: string, entry: ModelConfig): { name: string; provider: string } {
  return entry.provider === 'openai' ? { name: entry.model, provider: 'openai' } : { name: modelId, provider: entry.provider };
}
