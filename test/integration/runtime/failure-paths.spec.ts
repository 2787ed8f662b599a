/**
 * Failure paths (DESIGN §3 steps 3–4, issue 4 "Tests"): an unknown tool, invalid arguments (ajv), a tool
 * timeout and malformed tool-call JSON each give the model a clear error result and fire `on_tool_error` +
 * `onToolCallError`; an OpenAI-compatible model answering HTTP 500 ends the operation with reason `error`
 * and `onError`. None of them may leave an unhandled rejection behind.
 */
import type { ServerResponse } from 'node:http';
import { Injectable } from '@nestjs/common';
import { ToolCallContext, type OnErrorEvent, type OnToolCallErrorEvent } from '../../../src/index.js';
import { ModelError } from '../../../src/runtime/models/chat-model.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import type { LocalToolContext } from '../../../src/runtime/tools/local-tool.js';
import { completion, sendJson, startChatCompletionsServer, type ChatCompletionsServer, type RecordedCall } from '../models/chat-completions-server.js';
import { bootRuntime, eventOf, guardUnhandledRejections, pointsOf, rejectionOf, TERMINAL_POINTS, within, type RuntimeApp } from './runtime-test-kit.js';

const CONFIG = `
system: failure-test
models:
  ghost:
    provider: scripted
    script:
      - toolCalls: [ { identifier: ghost, apiName: missing, args: {} } ]
      - content: "saw: {{lastToolResult}}"
  badargs:
    provider: scripted
    script:
      - toolCalls: [ { identifier: calc, apiName: square, args: { n: "not a number" } } ]
      - content: "saw: {{lastToolResult}}"
  slowtool:
    provider: scripted
    script:
      - toolCalls: [ { identifier: slow, apiName: hang, args: {} } ]
      - content: "saw: {{lastToolResult}}"
  # One attempt: a failed call must end the run here (K4 retries are tested in model-resilience.spec.ts).
  remote: { provider: openai, model: gpt-test, baseUrlEnv: RT_FAILURE_LLM_BASE, apiKeyEnv: RT_FAILURE_LLM_KEY, timeoutSeconds: 20, retry: { attempts: 1 } }
agents:
  ghoster: { model: ghost, tools: [ "calc/*" ] }
  arguer: { model: badargs, tools: [ "calc/*" ] }
  sleeper: { model: slowtool, tools: [ "slow/*" ] }
  remote: { model: remote, tools: [ "calc/*" ] }
`;

const runs = { square: 0, hang: 0 };
const hangSignals: AbortSignal[] = [];

@Injectable()
class FailureTools {
  @Tool({
    identifier: 'calc',
    apiName: 'square',
    description: 'squares n',
    parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'], additionalProperties: false },
  })
  square(args: Record<string, unknown>): string {
    runs.square++;
    return String((args.n as number) ** 2);
  }

  @Tool({ identifier: 'slow', apiName: 'hang', description: 'never answers', parameters: { type: 'object', properties: {} }, timeoutMs: 100 })
  async hang(_args: Record<string, unknown>, context: LocalToolContext): Promise<string> {
    runs.hang++;
    hangSignals.push(context.signal);
    await new Promise<void>((resolve) => context.signal.addEventListener('abort', () => resolve(), { once: true }));
    return 'too late';
  }
}

guardUnhandledRejections();

let app: RuntimeApp;
let server: ChatCompletionsServer;

beforeAll(async () => {
  server = await startChatCompletionsServer();
  process.env.RT_FAILURE_LLM_BASE = server.baseUrl;
  app = await bootRuntime({ observe: true, config: CONFIG, providers: [FailureTools] });
});

afterAll(async () => {
  await app?.close();
  await server?.close();
  delete process.env.RT_FAILURE_LLM_BASE;
});

beforeEach(() => {
  runs.square = 0;
  runs.hang = 0;
  hangSignals.length = 0;
  server.calls.length = 0;
});

/** The tool-call points of one operation, in order, with the error fields the tool events carry. */
function toolErrorOf(operationId: string): { engine: ToolCallContext; agent: OnToolCallErrorEvent } {
  const engine = eventOf(app.events, operationId, 'on_tool_error')?.payload as ToolCallContext | undefined;
  const agent = eventOf(app.events, operationId, 'onToolCallError')?.payload as OnToolCallErrorEvent | undefined;
  expect(engine).toBeDefined();
  expect(agent).toBeDefined();
  return { engine: engine!, agent: agent! };
}

const TOOL_ERROR_ORDER = ['before_tool_call', 'beforeToolCall', 'on_tool_error', 'onToolCallError'];
const TOOL_POINTS = ['before_tool_call', 'beforeToolCall', 'transform_tool_result', 'afterToolCall', 'after_tool_call', 'on_tool_error', 'onToolCallError'] as const;

describe('tool failures give the model an error result and fire on_tool_error + onToolCallError (DESIGN §3 step 4)', () => {
  it('G1: an unknown tool is tool_not_available, the model sees the error, the run goes on to done', async () => {
    const result = await app.runtime.run('use a ghost', { agentId: 'ghoster' });
    expect(result.reason).toBe('done');
    // Nothing of the tool chain runs for a tool the agent was not offered: only the two error reports.
    expect(pointsOf(app.events, result.operationId, TOOL_POINTS)).toEqual(['on_tool_error', 'onToolCallError']);
    const { engine, agent } = toolErrorOf(result.operationId);
    expect(engine).toMatchObject({ identifier: 'ghost', apiName: 'missing', status: 'error', error: { type: 'tool_not_available' } });
    expect(agent.error).toMatchObject({ type: 'tool_not_available', code: 'tool_not_available' });
    const tool = (await app.store.messages(result.operationId)).find((m) => m.role === 'tool')!;
    expect(tool).toMatchObject({ identifier: 'ghost', apiName: 'missing', state: { error: { type: 'tool_not_available' } } });
    expect(tool.content).toMatch(/^Error: .*ghost\/missing.*not available/);
    expect(result.content).toBe(`saw: ${tool.content}`);
  });

  it('invalid arguments (ajv): the tool is not run; the error result names the problem', async () => {
    const result = await app.runtime.run('square it', { agentId: 'arguer' });
    expect(result.reason).toBe('done');
    expect(runs.square).toBe(0);
    expect(pointsOf(app.events, result.operationId, TOOL_POINTS)).toEqual(TOOL_ERROR_ORDER);
    expect(toolErrorOf(result.operationId).agent.error).toMatchObject({ code: 'invalid_arguments' });
    const tool = (await app.store.messages(result.operationId)).find((m) => m.role === 'tool')!;
    expect(tool.content).toMatch(/^Error: invalid arguments for calc\/square/);
    expect(result.content).toBe(`saw: ${tool.content}`);
  });

  it('F3: a tool that exceeds its timeoutMs: a tool error of type timeout; its signal is aborted; the model sees the error', async () => {
    const result = await within(app.runtime.run('hang', { agentId: 'sleeper' }), 'run()');
    expect(result.reason).toBe('done');
    expect(runs.hang).toBe(1);
    expect(hangSignals[0]!.aborted).toBe(true);
    const { engine, agent } = toolErrorOf(result.operationId);
    expect(agent.error).toMatchObject({ type: 'timeout', code: 'timeout' });
    expect(agent.willRetry).toBe(false);
    expect(engine.error).toEqual({ type: 'timeout' });
    const tool = (await app.store.messages(result.operationId)).find((m) => m.role === 'tool')!;
    expect(tool.content).toMatch(/^Error: slow\/hang timed out/);
    expect(tool.state).toEqual({ error: { type: 'timeout' } });
    expect(pointsOf(app.events, result.operationId, TERMINAL_POINTS)).toEqual(['onComplete', 'on_run_end']);
  });
});

describe('an OpenAI-compatible model behind the local Chat Completions server', () => {
  it('HTTP 500: the operation ends with reason error and onError; run() rejects with the ModelError; done resolves', async () => {
    server.handle((_call, res) => sendJson(res, 500, { error: { message: 'upstream exploded' } }));
    const onError: OnErrorEvent[] = [];
    const error = await rejectionOf(
      app.runtime.run('hello', { agentId: 'remote', hooks: [{ id: 'err', type: 'onError', handler: (event) => void onError.push(event) }] }),
    );
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: 'http_error', status: 500 });
    expect((error as Error).message).not.toContain('upstream exploded');
    expect(onError).toHaveLength(1);
    expect(onError[0]).toMatchObject({ errorType: 'ModelError', errorCode: 'http_error' });
    expect(pointsOf(app.events, onError[0]!.operationId, TERMINAL_POINTS)).toEqual(['onError', 'onComplete', 'on_run_error']);
    expect(server.calls).toHaveLength(1);

    const { operationId, done } = await app.runtime.execAgent({ agentId: 'remote', prompt: 'again' });
    await expect(within(done, 'done')).resolves.toMatchObject({ operationId, status: 'completed', reason: 'error' });
  });

  it('malformed tool-call JSON: the tool is not run; the model sees an error result and answers', async () => {
    server.handle((call: RecordedCall, res: ServerResponse) => {
      const messages = call.body.messages as Array<{ role: string; content: string | null }>;
      const tool = messages.findLast((m) => m.role === 'tool');
      if (!tool) {
        sendJson(res, 200, completion({ content: null, tool_calls: [{ id: 'call_bad', type: 'function', function: { name: 'calc__square', arguments: '{"n": 4' } }] }));
      } else {
        sendJson(res, 200, completion({ content: `saw: ${tool.content}` }));
      }
    });
    const result = await within(app.runtime.run('square four', { agentId: 'remote' }), 'run()');
    expect(result.reason).toBe('done');
    expect(runs.square).toBe(0);
    expect(pointsOf(app.events, result.operationId, TOOL_POINTS)).toEqual(TOOL_ERROR_ORDER);
    expect(toolErrorOf(result.operationId).agent.error).toMatchObject({ code: 'invalid_arguments' });

    const messages = await app.store.messages(result.operationId);
    const tool = messages.find((m) => m.role === 'tool')!;
    expect(tool).toMatchObject({ toolCallId: 'call_bad', identifier: 'calc', apiName: 'square' });
    expect(tool.content).toMatch(/^Error: .*not valid JSON/);
    // The second request carried the error result back to the model, paired with its call.
    expect(server.calls).toHaveLength(2);
    expect(server.calls[1]!.body.messages).toContainEqual({ role: 'tool', tool_call_id: 'call_bad', content: tool.content });
    expect(result.content).toBe(`saw: ${tool.content}`);
  });
});
