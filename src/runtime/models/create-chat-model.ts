/** Builds the provider for one `models:` entry of `agents.yaml` (DESIGN §8). */
import { ModelError, type ChatModel } from './chat-model.js';
import type { CodeModels } from './code-models.js';
import type { ModelConfig } from './model-config.js';
import { OpenAiChatModel, type OpenAiChatModelOptions } from './openai-chat-model.js';
import { ScriptedChatModel } from './scripted-chat-model.js';

export interface CreateChatModelOptions extends OpenAiChatModelOptions {
  /** DESIGN §12: the models given in code, which `provider: code` entries name. */
  codeModels?: CodeModels;
}

export function createChatModel(config: ModelConfig, options: CreateChatModelOptions = {}): ChatModel {
  switch (config.provider) {
    case 'scripted':
      return new ScriptedChatModel(config);
    case 'openai':
      return new OpenAiChatModel(config, { ...(options.env ? { env: options.env } : {}), ...(options.connections !== undefined ? { connections: options.connections } : {}) });
    case 'code': {
      // The host's own instance, not a copy: whoever built it closes it.
      const model = options.codeModels && Object.hasOwn(options.codeModels, config.name) ? options.codeModels[config.name] : undefined;
      if (!model) throw new ModelError('configuration', `no model named "${config.name}" was given in code (AgentHooksModule.forRoot({ models }))`);
      return model;
    }
    default:
      // Reached only by untyped input; the config loader rejects unknown providers first.
      throw new ModelError('configuration', 'unknown model provider');
  }
}
