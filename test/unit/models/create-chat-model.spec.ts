/** Issue 4 item 5: one provider per `models:` entry. */
import { ModelError } from '../../../src/runtime/models/chat-model.js';
import { createChatModel } from '../../../src/runtime/models/create-chat-model.js';
import type { ModelConfig } from '../../../src/runtime/models/model-config.js';
import { OpenAiChatModel } from '../../../src/runtime/models/openai-chat-model.js';
import { ScriptedChatModel } from '../../../src/runtime/models/scripted-chat-model.js';

describe('createChatModel', () => {
  it('builds a scripted model from a scripted entry', async () => {
    const model = createChatModel({ provider: 'scripted', script: [{ content: 'hi {{prompt}}' }] });
    expect(model).toBeInstanceOf(ScriptedChatModel);
    expect((await model.complete({ messages: [], tools: [], prompt: 'you' })).content).toBe('hi you');
  });

  it('builds an OpenAI-compatible model from an openai entry (no request until called)', async () => {
    const model = createChatModel({ provider: 'openai', model: 'gpt-4o-mini' });
    expect(model).toBeInstanceOf(OpenAiChatModel);
    await model.close?.();
  });

  it('rejects an unknown provider or invalid settings with a configuration ModelError', () => {
    const unknown = { provider: 'anthropic', model: 'x' } as unknown as ModelConfig;
    expect(() => createChatModel(unknown)).toThrow(ModelError);
    expect(() => createChatModel(unknown)).toThrow('unknown model provider');
    expect(() => createChatModel({ provider: 'openai', model: '' })).toThrow(/model must be a non-empty string/);
    expect(() => createChatModel({ provider: 'openai', model: 'm', timeoutSeconds: 0 })).toThrow(/timeoutSeconds/);
  });
});
