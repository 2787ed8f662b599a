/**
 * DESIGN §12: models a host gives in code (`AgentHooksModule.forRoot({ models: { main: chatModel } })`),
 * named from agents.yaml by `{ provider: code, name: main }`. Checked once, when the module builds its
 * agents, so a wrong value fails the boot instead of the first run.
 */
import { ModelError, type ChatModel } from './chat-model.js';

export type CodeModels = Readonly<Record<string, ChatModel>>;

/** The module's `models` option as a map of ChatModels; a clear `configuration` error otherwise. */
export function checkedCodeModels(models: unknown): CodeModels {
  if (models === undefined) return {};
  if (models === null || typeof models !== 'object' || Array.isArray(models)) {
    throw new ModelError('configuration', 'AgentHooksModule.forRoot({ models }) must be an object of ChatModels keyed by name');
  }
  const checked: Record<string, ChatModel> = {};
  for (const [name, model] of Object.entries(models)) {
    if (model === null || typeof model !== 'object' || typeof (model as { complete?: unknown }).complete !== 'function') {
      // The name is the host's own key, safe to show; the value is never printed.
      const hint = isAiSdkModel(model) ? '; an AI SDK model is wrapped with aiSdkChatModel(model)' : '';
      throw new ModelError('configuration', `AgentHooksModule.forRoot({ models }): "${name}" is not a ChatModel (an object with a complete(request, options) function)${hint}`);
    }
    checked[name] = model as ChatModel;
  }
  return checked;
}

/** A provider-level AI SDK model given as it is, the likeliest mistake with the adapter. */
function isAiSdkModel(value: unknown): boolean {
  return value !== null && typeof value === 'object' && typeof (value as { doGenerate?: unknown }).doGenerate === 'function' && typeof (value as { specificationVersion?: unknown }).specificationVersion === 'string';
}
