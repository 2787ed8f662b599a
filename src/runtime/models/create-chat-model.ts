/** Builds the provider for one `models:` entry of `agents.yaml` (DESIGN §8). */
import { ModelError, type ChatModel } from './chat-model.js';
import type { ModelConfig } from './model-config.js';
import { OpenAiChatModel, type OpenAiChatModelOptions } from './openai-chat-model.js';
import { ScriptedChatModel } from './scripted-chat-model.js';

export type CreateChatModelOptions = OpenAiChatModelOptions;

export function createChatModel(config: ModelConfig, options: CreateChatModelOptions = {}): ChatModel {
  switch (config.provider) {
    case 'scripted':
      return new ScriptedChatModel(config);
    case 'openai':
      return new OpenAiChatModel(config, options);
    default:
      // Reached only by untyped input; the config loader rejects unknown providers first.
      throw new ModelError('configuration', 'unknown model provider');
  }
}
