/**
 * DESIGN §12 "Model calls": a model given in code (`AgentHooksModule.forRoot({ models })`) implements the
 * exported `ChatModel` port and is named from agents.yaml with `{ provider: code, name }`. It answers runs
 * like any provider (tool calls, usage), takes `retry` / `timeoutMs` from its entry (K4), gets the call's
 * signal in `complete(request, { signal })`, and stays the host's to close. A name that matches no code
 * model, or a value that is not a ChatModel, fails the boot clearly.
 */
import { Injectable } from '@nestjs/common';
import { AgentsConfigError, ModelError, type ChatCallOptions, type ChatModel, type ChatRequest, type ChatResponse } from '../../../src/index.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { bootRuntime, guardUnhandledRejections, rejectionOf, within, type RuntimeApp } from './runtime-test-kit.js';

guardUnhandledRejections();

type Answer = (request: ChatRequest, options: ChatCallOptions | undefined) => Promise<ChatResponse>;

/** A host's own provider: plays `answers` in order and records every call it got. */
class RecordingChatModel implements ChatModel {
  readonly calls: { request: ChatRequest; options: ChatCallOptions | undefined }[] = [];
  closed = false;

  constructor(private readonly answers: Answer[]) {}

  complete(request: ChatRequest, options?: ChatCallOptions): Promise<ChatResponse> {
    this.calls.push({ request, options });
    const answer = this.answers[this.calls.length - 1];
    if (!answer) return Promise.reject(new Error('the test model has no answer left'));
    return answer(request, options);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

const usage = { inputTokens: 10, outputTokens: 2, costUsd: 0.5 };

@Injectable()
class Tools {
  @Tool({ identifier: 'clock', apiName: 'now', description: 'time', parameters: { type: 'object', properties: {} } })
  now(): string {
    return '2026-12-03T00:00:00Z';
  }
}

const config = `
system: code-models
models:
  main: { provider: code, name: main, retry: { attempts: 2, initialDelayMs: 1, maxDelayMs: 5 }, timeoutMs: 200 }
agents:
  assistant: { model: main, tools: [ "clock/*" ] }
`;

let app: RuntimeApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('DESIGN §12 models given in code', () => {
  it('DESIGN §12: a model given in code answers through { provider: code, name }, a tool call then content', async () => {
    const model = new RecordingChatModel([
      async () => ({ content: '', toolCalls: [{ id: 'call-1', identifier: 'clock', apiName: 'now', args: {} }], finishReason: 'tool_calls', usage }),
      async () => ({ content: 'it is morning', toolCalls: [], finishReason: 'stop', usage }),
    ]);
    app = await bootRuntime({ config, providers: [Tools], module: { models: { main: model } } });
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'assistant', prompt: 'what time is it?' });
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: 'it is morning' });

    expect(model.calls).toHaveLength(2);
    const [first, second] = model.calls;
    expect(first!.request.tools.map((tool) => `${tool.identifier}/${tool.apiName}`)).toEqual(['clock/now']);
    expect(first!.request.messages.at(-1)).toEqual({ role: 'user', content: 'what time is it?' });
    // The second call carries the tool's result, answered to the model's own call id.
    expect(second!.request.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'call-1', content: expect.stringContaining('2026-12-03T00:00:00Z') });
    // The call's signal arrives in the options (DESIGN §12) and, for older providers, in the request.
    for (const call of model.calls) {
      expect(call.options?.signal).toBeInstanceOf(AbortSignal);
      expect(call.options?.signal).toBe(call.request.signal);
    }
    expect((await app.store.getOperation(operationId))?.usage).toEqual({ inputTokens: 20, outputTokens: 4, costUsd: 1 });

    await app.close();
    app = undefined;
    // The host built it, so the host closes it.
    expect(model.closed).toBe(false);
  });

  it('K4: a code model takes retry and timeoutMs from its entry; the timed-out attempt\'s signal is aborted', async () => {
    let timedOut: AbortSignal | undefined;
    const model = new RecordingChatModel([
      // Ignores its deadline on purpose: the runtime must still end the attempt at timeoutMs and abort its signal.
      (_request, options) => {
        timedOut = options?.signal;
        return new Promise<never>(() => undefined);
      },
      async () => ({ content: 'second try', toolCalls: [], usage }),
    ]);
    app = await bootRuntime({ config, providers: [Tools], module: { models: { main: model } } });
    const { done } = await app.runtime.execAgent({ agentId: 'assistant', prompt: 'hello' });
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: 'second try' });
    expect(model.calls).toHaveLength(2);
    expect(timedOut?.aborted).toBe(true);
  });

  it('DESIGN §12: a { provider: code } entry naming no model given in code fails the boot with file, line and key', async () => {
    const error = await rejectionOf(bootRuntime({ config, providers: [Tools], module: { models: { other: new RecordingChatModel([]) } } }));
    expect(error).toBeInstanceOf(AgentsConfigError);
    expect((error as AgentsConfigError).issues).toEqual([
      expect.objectContaining({ file: expect.stringMatching(/agents\.yaml$/), line: 4, path: 'models.main.name', entry: 'main', message: expect.stringContaining('forRoot({ models })') }),
    ]);
    expect((error as Error).message).toMatch(/agents\.yaml:4 models\.main\.name "main": names no model given in code/);
  });

  it('DESIGN §12: a value in forRoot({ models }) that is not a ChatModel fails the boot, naming its key', async () => {
    const notAModel = { answer: () => 'hi' } as unknown as ChatModel;
    const error = await rejectionOf(bootRuntime({ config, providers: [Tools], module: { models: { main: notAModel } } }));
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: 'configuration', message: expect.stringContaining('"main" is not a ChatModel') });
  });
});
