/**
 * Compaction (SPEC A3, V; DESIGN §8): above `compactAtTokens`, beforeCompact → a summary through the model →
 * afterCompact, inside the step (after beforeStep, before the model call); a failure → onCompactError and
 * the run goes on uncompacted. Scripted summaries consume no script entry; the published conversation keeps
 * every message.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { bootRuntime, eventOf, pointsOf, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { completion, sendJson, startChatCompletionsServer, type ChatCompletionsServer } from '../models/chat-completions-server.js';
import { HUMAN_LOOP_CONFIG, HumanLoopTools } from '../human-loop/human-loop-kit.js';

let app: RuntimeApp | undefined;
let llm: ChatCompletionsServer | undefined;

afterEach(async () => {
  await app?.close();
  await llm?.close();
  app = undefined;
  llm = undefined;
  delete process.env.COMPACT_LLM_BASE;
  delete process.env.COMPACT_LLM_KEY;
});

const REMOTE_CONFIG = `
system: compaction-remote
models:
  # One attempt: a failed summary must stay failed here (K4 retries are tested in model-attempts.spec.ts).
  remote: { provider: openai, model: gpt-test, baseUrlEnv: COMPACT_LLM_BASE, apiKeyEnv: COMPACT_LLM_KEY, retry: { attempts: 1 } }
agents:
  compacting: { model: remote, tools: [], limits: { compactAtTokens: 5 } }
`;

const LONG_PROMPT = 'Please keep track of the time for me. '.repeat(4);

describe('compaction', () => {
  it('A3: beforeStep → beforeCompact → afterCompact → model call; the summary stands in for earlier messages and consumes no script entry', async () => {
    app = await bootRuntime({ observe: true, config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools] });
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'compacting', prompt: LONG_PROMPT });
    const result = await within(done, 'done');
    expect(result).toMatchObject({ reason: 'done', content: 'final after 2026-11-30T12:00:00Z' });
    const points = pointsOf(app.events, operationId, ['beforeStep', 'beforeCompact', 'afterCompact', 'onCompactError', 'beforeToolCall', 'afterStep']);
    expect(points.slice(0, 5)).toEqual(['beforeStep', 'beforeCompact', 'afterCompact', 'beforeToolCall', 'afterStep']);
    expect(points).not.toContain('onCompactError');
    const before = eventOf(app.events, operationId, 'beforeCompact')?.payload as { messageCount: number; tokenCount: number; stepIndex: number };
    expect(before).toMatchObject({ messageCount: 1, stepIndex: 0 });
    expect(before.tokenCount).toBe(Math.ceil(LONG_PROMPT.length / 4));
    const after = eventOf(app.events, operationId, 'afterCompact')?.payload as { groupId: string; summary: string };
    expect(after).toMatchObject({ messagesBefore: 1, messagesAfter: 1, groupId: expect.any(String) });
    expect(after.summary).toBe(`Summary of 1 earlier messages. Prompt: ${LONG_PROMPT}.`);
    const operation = await app.store.getOperation(operationId);
    expect(operation?.compaction).toMatchObject({ groupId: expect.any(String) });
    // History readers still see every message: user, 3 assistant turns, 2 tool results.
    expect((await app.store.messages(operationId)).map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
  });

  it('A3: a failed summary → onCompactError (error, tokenCount, stepIndex) and the run goes on uncompacted', async () => {
    llm = await startChatCompletionsServer();
    let calls = 0;
    llm.handle((_call, res) => {
      calls += 1;
      if (calls === 1) sendJson(res, 503, { error: { message: 'summaries are down' } });
      else sendJson(res, 200, completion({ content: 'answered without a summary' }, { prompt_tokens: 5, completion_tokens: 3 }));
    });
    process.env.COMPACT_LLM_BASE = llm.baseUrl;
    process.env.COMPACT_LLM_KEY = 'test-key';
    app = await bootRuntime({ observe: true, config: REMOTE_CONFIG });
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'compacting', prompt: LONG_PROMPT });
    const result = await within(done, 'done');
    expect(result).toMatchObject({ reason: 'done', content: 'answered without a summary' });
    expect(pointsOf(app.events, operationId, ['beforeCompact', 'afterCompact', 'onCompactError'])).toEqual(['beforeCompact', 'onCompactError']);
    expect(eventOf(app.events, operationId, 'onCompactError')?.payload).toMatchObject({
      stepIndex: 0,
      tokenCount: Math.ceil(LONG_PROMPT.length / 4),
      error: { type: 'ModelError', message: expect.stringContaining('503') },
    });
    expect((await app.store.getOperation(operationId))?.compaction).toBeUndefined();
    // The second request was the step itself, with the whole conversation.
    expect(JSON.stringify(llm.calls[1]?.body)).toContain('Please keep track');
  });

  it('A3: after a compaction the model sees the summary instead of the messages it replaced', async () => {
    llm = await startChatCompletionsServer();
    llm.handle((_call, res) => {
      const isSummary = llm!.calls.length === 1;
      sendJson(res, 200, completion({ content: isSummary ? 'SUMMARY-OF-EVERYTHING' : 'final answer' }, { prompt_tokens: 5, completion_tokens: 3 }));
    });
    process.env.COMPACT_LLM_BASE = llm.baseUrl;
    process.env.COMPACT_LLM_KEY = 'test-key';
    app = await bootRuntime({ observe: true, config: REMOTE_CONFIG });
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'compacting', prompt: LONG_PROMPT });
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: 'final answer' });
    expect(eventOf(app.events, operationId, 'afterCompact')?.payload).toMatchObject({ summary: 'SUMMARY-OF-EVERYTHING' });
    const stepRequest = JSON.stringify(llm.calls[1]?.body);
    expect(stepRequest).toContain('SUMMARY-OF-EVERYTHING');
    expect(stepRequest).not.toContain('Please keep track');
    // The summary's usage counts toward the operation's totals.
    expect((await app.store.getOperation(operationId))?.usage).toMatchObject({ inputTokens: 10, outputTokens: 6 });
  });
});

