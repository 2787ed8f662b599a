/**
 * Issue 4 item 9: the shipped `config/agents.yaml` is the offline quickstart. It loads with the loader,
 * has no MCP server and no network model, and its scripted model plays the clock conversation.
 */
import { fileURLToPath } from 'node:url';
import { loadAgentsConfig } from '../../../src/config/agents-config.loader.js';
import { createChatModel } from '../../../src/runtime/models/create-chat-model.js';
import { ScriptedChatModel } from '../../../src/runtime/models/scripted-chat-model.js';
import { compileToolPattern } from '../../../src/runtime/tools/tool-pattern.js';

const FILE = fileURLToPath(new URL('../../../config/agents.yaml', import.meta.url));

describe('config/agents.yaml (the offline quickstart)', () => {
  it('loads: system quickstart, scripted models only, no MCP server, an assistant with limits', async () => {
    const config = await loadAgentsConfig(FILE);
    expect(config.system).toBe('quickstart');
    // `default` plays the clock conversation; `timekeeper` asks to set the clock, which the quickstart policy
    // denies; `navigator` asks the user's browser (a declared client tool, G1) to open a page.
    expect(Object.keys(config.models)).toEqual(['default', 'timekeeper', 'navigator']);
    expect(Object.keys(config.clientTools)).toEqual(['browser/open']);
    expect(config.agents.navigator?.tools).toEqual(['browser/open']);
    for (const model of Object.values(config.models)) expect(model.provider).toBe('scripted');
    expect(config.mcpServers).toEqual({});
    // The quickstart registers its illustrative hooks through plugins.toml.
    expect(Object.keys((config.hooks?.data ?? {}) as object).sort()).toEqual(['after_tool_call', 'beforeToolCall']);
    const assistant = config.agents.assistant!;
    expect(assistant.model).toBe('default');
    expect(assistant.limits).toEqual({ maxSteps: 10, maxCostUsd: 1, compactAtTokens: 8000 });
    expect(assistant.tools?.some((source) => {
      const pattern = compileToolPattern(source);
      return pattern.kind === 'glob' && pattern.matches('clock/now');
    })).toBe(true);
    expect(assistant.tools?.some((pattern) => pattern.startsWith('mcp:'))).toBe(false);
  });

  it('its model calls clock/now, then answers with the tool result, at no cost', async () => {
    const config = await loadAgentsConfig(FILE);
    const model = createChatModel(config.models.default!);
    expect(model).toBeInstanceOf(ScriptedChatModel);
    const prompt = 'What time is it?';
    const first = await model.complete({ messages: [{ role: 'user', content: prompt }], tools: [], prompt });
    expect(first.content).toBe('');
    expect(first.toolCalls).toEqual([{ id: 'call_0_0', identifier: 'clock', apiName: 'now', args: {} }]);
    const second = await model.complete({
      messages: [
        { role: 'user', content: prompt },
        { role: 'assistant', content: '', toolCalls: first.toolCalls },
        { role: 'tool', content: '2030-01-01T12:00:00Z', toolCallId: 'call_0_0', identifier: 'clock', apiName: 'now' },
      ],
      tools: [],
      prompt,
    });
    expect(second).toEqual({
      content: 'It is 2030-01-01T12:00:00Z.',
      toolCalls: [],
      usage: { inputTokens: expect.any(Number), outputTokens: 7, costUsd: 0 },
    });
  });
});
