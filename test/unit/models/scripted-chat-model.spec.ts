/**
 * DESIGN §8, issue 4 item 5: the scripted model. Entry = number of assistant messages in the request
 * (stateless, so a restart replays the same answer), `{{prompt}}` / `{{lastToolResult}}` in every string of
 * the entry, an empty final message past the end, tokens = ceil(characters / 4) per message, and compaction
 * summaries that consume no entry. Token numbers below are computed by hand.
 */
import { ModelError, type ChatMessage, type ChatRequest } from '../../../src/runtime/models/chat-model.js';
import type { ScriptedModelConfig } from '../../../src/runtime/models/model-config.js';
import { ScriptedChatModel } from '../../../src/runtime/models/scripted-chat-model.js';

const config = (): ScriptedModelConfig => ({
  provider: 'scripted',
  costPerTokenUsd: 0.25,
  script: [
    {
      content: 'Looking up {{prompt}}',
      toolCalls: [
        {
          identifier: 'kb',
          apiName: 'search',
          args: {
            q: '{{prompt}}',
            filters: [{ text: 'after {{lastToolResult}}!' }, 3, true, null],
            nested: { deep: { deeper: ['{{prompt}}|{{lastToolResult}}'] } },
            '{{prompt}}key': 'keys are not templates',
          },
        },
        { identifier: 'clock', apiName: 'now' },
      ],
    },
    { content: 'It is {{lastToolResult}}', toolCalls: [{ identifier: 'echo', apiName: 'say', args: { q: 'x' } }] },
    { content: 'Done: {{prompt}} / {{lastToolResult}} / {{unknown}}' },
  ],
});

function request(messages: ChatMessage[], extra: Partial<ChatRequest> = {}): ChatRequest {
  return { messages, tools: [], prompt: 'weather', ...extra };
}

const user: ChatMessage = { role: 'user', content: 'Hello' };
const assistant = (content = ''): ChatMessage => ({ role: 'assistant', content });
const tool = (content: string): ChatMessage => ({ role: 'tool', content, toolCallId: 'c', identifier: 'kb', apiName: 'search' });

describe('scripted model: which entry', () => {
  it('plays entry 0 with no assistant message, entry n after n assistant messages', async () => {
    const model = new ScriptedChatModel(config());
    expect((await model.complete(request([user]))).content).toBe('Looking up weather');
    expect((await model.complete(request([user, assistant(), tool('sunny')]))).content).toBe('It is sunny');
    expect((await model.complete(request([user, assistant(), tool('a'), assistant(), tool('b')]))).content).toBe('Done: weather / b / {{unknown}}');
  });

  it('counts only assistant messages (system, user and tool messages do not advance the script)', async () => {
    const model = new ScriptedChatModel(config());
    const many: ChatMessage[] = [{ role: 'system', content: 's' }, user, user, tool('t'), tool('u')];
    expect((await model.complete(request(many))).content).toBe('Looking up weather');
  });

  it('past the end of the script: an empty final message with no tool calls and no output tokens', async () => {
    const model = new ScriptedChatModel(config());
    const response = await model.complete(request([user, assistant(), assistant(), assistant()]));
    expect(response.content).toBe('');
    expect(response.toolCalls).toEqual([]);
    expect(response.usage.outputTokens).toBe(0);
    // An empty script ends at once.
    const empty = new ScriptedChatModel({ provider: 'scripted', script: [] });
    expect(await empty.complete(request([user]))).toEqual({ content: '', toolCalls: [], usage: { inputTokens: 2, outputTokens: 0, costUsd: 0 } });
  });

  it('an entry with neither content nor tool calls is an empty final message', async () => {
    const model = new ScriptedChatModel({ provider: 'scripted', script: [{}] });
    const response = await model.complete(request([user]));
    expect(response.content).toBe('');
    expect(response.toolCalls).toEqual([]);
  });
});

describe('scripted model: templates', () => {
  it('fills {{prompt}} and {{lastToolResult}} in every string of the args, recursively; keys and other scalars stay', async () => {
    const model = new ScriptedChatModel(config());
    const { toolCalls } = await model.complete(request([user, tool('first'), tool('LAST')]));
    expect(toolCalls[0]!.args).toEqual({
      q: 'weather',
      filters: [{ text: 'after LAST!' }, 3, true, null],
      nested: { deep: { deeper: ['weather|LAST'] } },
      '{{prompt}}key': 'keys are not templates',
    });
  });

  it('lastToolResult is the content of the last tool message, "" when there is none', async () => {
    const model = new ScriptedChatModel(config());
    const none = await model.complete(request([user]));
    expect((none.toolCalls[0]!.args.filters as unknown[])[0]).toEqual({ text: 'after !' });
    const later = await model.complete(request([user, tool('older'), assistant(), tool('newer'), { role: 'user', content: 'again' }]));
    expect(later.content).toBe('It is newer');
  });

  it('substitutes in one pass: a prompt containing a placeholder stays literal', async () => {
    const model = new ScriptedChatModel(config());
    const response = await model.complete(request([user], { prompt: 'say {{lastToolResult}}' }));
    expect(response.content).toBe('Looking up say {{lastToolResult}}');
    expect(response.toolCalls[0]!.args.q).toBe('say {{lastToolResult}}');
  });

  it('replacement text with `$` patterns is inserted literally', async () => {
    const model = new ScriptedChatModel(config());
    expect((await model.complete(request([user], { prompt: "$& $' $1" }))).content).toBe("Looking up $& $' $1");
  });

  it('a tool call without args gets {}', async () => {
    const model = new ScriptedChatModel(config());
    expect((await model.complete(request([user]))).toolCalls[1]).toEqual({ id: 'call_0_1', identifier: 'clock', apiName: 'now', args: {} });
  });
});

describe('scripted model: ids, determinism and restarts', () => {
  it('tool calls get ids call_<assistantIndex>_<i>', async () => {
    const model = new ScriptedChatModel(config());
    expect((await model.complete(request([user]))).toolCalls.map((c) => c.id)).toEqual(['call_0_0', 'call_0_1']);
    expect((await model.complete(request([user, assistant(), tool('x')]))).toolCalls.map((c) => c.id)).toEqual(['call_1_0']);
  });

  it('same messages → same answer, from the same instance or a fresh one (a restarted process)', async () => {
    const messages = [user, assistant('a'), tool('sunny')];
    const before = await new ScriptedChatModel(config()).complete(request(messages));
    const again = await new ScriptedChatModel(config()).complete(request(messages));
    const model = new ScriptedChatModel(config());
    await model.complete(request([user])); // calls in between change nothing
    await model.complete(request([user, assistant(), assistant(), assistant(), assistant()]));
    expect(again).toEqual(before);
    expect(await model.complete(request(messages))).toEqual(before);
  });

  it('neither a caller mutating a response nor the config object after construction changes later answers', async () => {
    const cfg = config();
    const model = new ScriptedChatModel(cfg);
    const first = await model.complete(request([user]));
    (first.toolCalls[0]!.args.nested as { deep: unknown }).deep = 'mutated';
    cfg.script[0]!.content = 'changed';
    const second = await model.complete(request([user]));
    expect(second.content).toBe('Looking up weather');
    expect(second.toolCalls[0]!.args.nested).toEqual({ deep: { deeper: ['weather|'] } });
  });
});

describe('scripted model: usage', () => {
  it('tokens = ceil(characters / 4) per message; cost = (input + output) × costPerTokenUsd', async () => {
    const model = new ScriptedChatModel(config());
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are terse.' }, // 14 chars → 4
      user, // 'Hello' 5 chars → 2
      // 'abc' 3 chars + '{"a":1}' 7 chars = 10 → 3
      { role: 'assistant', content: 'abc', toolCalls: [{ id: 'call_0_0', identifier: 'x', apiName: 'y', args: { a: 1 } }] },
      tool('result!'), // 7 chars → 2
    ];
    const response = await model.complete(request(messages));
    // Entry 1: 'It is result!' 13 chars + '{"q":"x"}' 9 chars = 22 → 6.
    expect(response.content).toBe('It is result!');
    expect(response.usage).toEqual({ inputTokens: 11, outputTokens: 6, costUsd: 4.25 });
  });

  it('rounds each message up on its own (not the sum of characters)', async () => {
    const model = new ScriptedChatModel({ provider: 'scripted', costPerTokenUsd: 1, script: [{ content: 'a' }] });
    // Three 1-character messages: 3 × ceil(1/4) = 3, not ceil(3/4) = 1. Output 'a' → 1.
    const response = await model.complete(request([{ role: 'user', content: 'x' }, tool('y'), { role: 'user', content: 'z' }]));
    expect(response.usage).toEqual({ inputTokens: 3, outputTokens: 1, costUsd: 4 });
  });

  it('output counts the content plus each tool call\'s serialized args, after substitution', async () => {
    const model = new ScriptedChatModel({
      provider: 'scripted',
      script: [{ content: '{{prompt}}', toolCalls: [{ identifier: 'a', apiName: 'b', args: { k: '{{prompt}}' } }, { identifier: 'c', apiName: 'd' }] }],
    });
    // 'weather' 7 + '{"k":"weather"}' 15 + '{}' 2 = 24 → 6; input 'Hello' → 2; default cost 0.
    expect((await model.complete(request([user]))).usage).toEqual({ inputTokens: 2, outputTokens: 6, costUsd: 0 });
  });
});

describe('scripted model: compaction summaries', () => {
  it('answer deterministically and do not consume a script entry', async () => {
    const model = new ScriptedChatModel(config());
    const messages: ChatMessage[] = [{ role: 'system', content: 'sys' }, user, assistant('a'), tool('sunny')];
    const summary = await model.complete(request(messages, { purpose: 'summary' }));
    expect(summary.content).toBe('Summary of 3 earlier messages. Prompt: weather. Last tool result: sunny');
    expect(summary.toolCalls).toEqual([]);
    expect(await model.complete(request(messages, { purpose: 'summary' }))).toEqual(summary);
    // The next step still plays entry 1 (one assistant message), as if no summary had been asked.
    expect((await model.complete(request(messages, { purpose: 'step' }))).content).toBe('It is sunny');
    // Usage is counted like any call: input 1+2+1+2 = 6; output 71 chars → 18; (6 + 18) × 0.25 = 6.
    expect(summary.usage).toEqual({ inputTokens: 6, outputTokens: 18, costUsd: 6 });
  });

  it('a summary past the end of the script is still a summary', async () => {
    const model = new ScriptedChatModel({ provider: 'scripted', script: [] });
    expect((await model.complete(request([user], { purpose: 'summary' }))).content).toBe('Summary of 1 earlier messages. Prompt: weather.');
  });
});

describe('scripted model: errors', () => {
  it('an aborted signal is a cancelled ModelError', async () => {
    const model = new ScriptedChatModel(config());
    const controller = new AbortController();
    controller.abort();
    await expect(model.complete(request([user], { signal: controller.signal }))).rejects.toMatchObject({ name: 'ModelError', code: 'cancelled' });
  });

  it('a negative or non-finite cost, or a script that is not a list, is a configuration error', () => {
    expect(() => new ScriptedChatModel({ provider: 'scripted', costPerTokenUsd: -1, script: [] })).toThrow(ModelError);
    expect(() => new ScriptedChatModel({ provider: 'scripted', costPerTokenUsd: Number.NaN, script: [] })).toThrow(/costPerTokenUsd/);
    expect(() => new ScriptedChatModel({ provider: 'scripted', script: 'x' as unknown as [] })).toThrow(/script must be an array/);
  });
});
