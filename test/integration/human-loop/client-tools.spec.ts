/**
 * Declared client tools (DESIGN §6, §8; SPEC G1): tools an outside executor runs, declared in agents.yaml
 * (`clientTools:`) or per operation (`execAgent({ clientTools })`). Offered to the model with their schema
 * when the agent's `tools:` selects them, always deferred, persisted with the operation; bad declarations
 * are refused naming the field, before anything is stored.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { InvalidClientToolsError, type ClientToolDeclaration } from '../../../src/index.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { completion, sendJson, startChatCompletionsServer, type ChatCompletionsServer, type RecordedCall } from '../models/chat-completions-server.js';
import { untilOperation, waiting } from './human-loop-kit.js';
import { bootRuntime, guardUnhandledRejections, rejectionOf, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';

const CONFIG = `
system: client-tools
clientTools:
  browser/open: { description: "Open a page in the user's browser", parameters: { type: object, properties: { url: { type: string } }, required: [ url ] } }
  # Every tools: entry must select something known when the config loads (G7): device/* selects this one,
  # and the per-operation device/photo of a caller that has a camera.
  device/flash: { description: "Turns the phone's flash on", parameters: { type: object, properties: {} } }
models:
  opening:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: browser, apiName: open, args: { url: "https://example.com" } } ]
      - content: "page: {{lastToolResult}}"
  badArgs:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: browser, apiName: open, args: { href: 7 } } ]
      - content: "saw: {{lastToolResult}}"
  photographing:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: device, apiName: photo, args: { zoom: 2 } } ]
      - content: "photo: {{lastToolResult}}"
  remote: { provider: openai, model: gpt-test, baseUrlEnv: CLIENT_TOOLS_LLM_BASE, apiKeyEnv: CLIENT_TOOLS_LLM_KEY, timeoutSeconds: 20 }
agents:
  browsing: { model: opening, tools: [ "browser/*" ] }
  sloppy: { model: badArgs, tools: [ "browser/*" ] }
  camera: { model: photographing, tools: [ "device/*" ] }
  cameraless: { model: photographing, tools: [ "clock/*" ] }
  remote: { model: remote, tools: [ "clock/*", "browser/*", "device/*" ] }
`;

const PHOTO: ClientToolDeclaration = {
  identifier: 'device',
  apiName: 'photo',
  description: 'Takes a photo on the phone',
  parameters: { type: 'object', properties: { zoom: { type: 'number' } } },
};

const executions = { now: 0 };

@Injectable()
class ClockTools {
  @Tool({ identifier: 'clock', apiName: 'now', description: 'the time', parameters: { type: 'object', properties: {} } })
  now(): string {
    executions.now++;
    return '2026-12-01T00:00:00Z';
  }
}

guardUnhandledRejections();

let llm: ChatCompletionsServer;
let dir: string;
let app: RuntimeApp;

beforeAll(async () => {
  llm = await startChatCompletionsServer();
  process.env.CLIENT_TOOLS_LLM_BASE = llm.baseUrl;
  dir = mkdtempSync(join(tmpdir(), 'agent-hooks-client-tools-'));
  app = await bootRuntime({ observe: true, config: CONFIG, providers: [ClockTools], database: `sqlite:${join(dir, 'db.sqlite')}` });
}, 30_000);

afterAll(async () => {
  await app?.close();
  await llm?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('G1 declared client tools', () => {
  it('G1: a configured client tool the agent selects is handed out as deferred, never run here; its result arrives through completeDeferred', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'browsing', prompt: 'open it' });
    await untilOperation(app.store, operationId, waiting);
    const [item] = await app.store.interventions(operationId);
    expect(item).toMatchObject({ kind: 'deferred', status: 'pending', identifier: 'browser', apiName: 'open', args: { url: 'https://example.com' } });
    await app.runtime.completeDeferred(operationId, item!.toolCallId, { content: '<html>hi</html>', success: true });
    expect(await within(done, 'done')).toMatchObject({ reason: 'done', content: 'page: <html>hi</html>' });
    const beforeEvent = app.events.find((e) => e.operationId === operationId && e.point === 'beforeToolCall')?.payload;
    expect(beforeEvent).toMatchObject({ executor: 'client', toolSource: 'client' });
  });

  it("G1: a client tool call whose arguments fail its schema is an invalid_arguments error, never handed out", async () => {
    const result = await within(app.runtime.run('open', { agentId: 'sloppy' }), 'run()');
    expect(result.reason).toBe('done');
    expect(await app.store.interventions(result.operationId)).toEqual([]);
    const tool = (await app.store.messages(result.operationId)).find((m) => m.role === 'tool')!;
    expect(tool.content).toMatch(/^Error: invalid arguments for browser\/open/);
  });

  it('G1: a per-operation client tool is offered when selected, persisted with the operation, and completes in another app on the same database', async () => {
    const { operationId } = await app.runtime.execAgent({ agentId: 'camera', prompt: 'smile', clientTools: [PHOTO] });
    await untilOperation(app.store, operationId, waiting);
    expect((await app.store.getOperation(operationId))?.clientTools).toEqual([PHOTO]);
    const [item] = await app.store.interventions(operationId);
    expect(item).toMatchObject({ kind: 'deferred', identifier: 'device', apiName: 'photo', args: { zoom: 2 } });

    // A second process on the same database: the step after the result offers the same client tools.
    const second = await bootRuntime({ observe: true, config: CONFIG, providers: [ClockTools], database: `sqlite:${join(dir, 'db.sqlite')}` });
    try {
      await second.runtime.completeDeferred(operationId, item!.toolCallId, { content: 'photo.jpg', success: true });
      await untilOperation(second.store, operationId, (op) => op.status === 'completed');
      const messages = await second.store.messages(operationId);
      expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: 'photo: photo.jpg' });
      const after = second.events.find((e) => e.operationId === operationId && e.point === 'afterToolCall')?.payload;
      expect(after).toMatchObject({ identifier: 'device', apiName: 'photo', executor: 'client', toolSource: 'client' });
    } finally {
      await second.close();
    }
  });

  it('G1: a per-operation client tool the agent does not select is tool_not_available', async () => {
    const { done } = await app.runtime.execAgent({ agentId: 'cameraless', prompt: 'smile', clientTools: [PHOTO] });
    const result = await within(done, 'done');
    expect(result.reason).toBe('done');
    expect(await app.store.interventions(result.operationId)).toEqual([]);
    const tool = (await app.store.messages(result.operationId)).find((m) => m.role === 'tool')!;
    expect(tool.state).toEqual({ error: { type: 'tool_not_available' } });
  });

  it('G1: the model is offered client tools with their schema, next to local tools', async () => {
    llm.handle((call: RecordedCall, res) => sendJson(res, 200, completion({ content: `tools: ${(call.body.tools as unknown[]).length}` })));
    const { done } = await app.runtime.execAgent({ agentId: 'remote', prompt: 'hi', clientTools: [PHOTO] });
    expect(await within(done, 'done', 20_000)).toMatchObject({ reason: 'done' });
    const tools = llm.calls.at(-1)!.body.tools as Array<{ function: { name: string; parameters: unknown } }>;
    expect(tools.map((t) => t.function.name)).toEqual(['clock__now', 'browser__open', 'device__flash', 'device__photo']);
    expect(tools[3]!.function.parameters).toEqual(PHOTO.parameters);
  });

  it.each([
    ['not an array', { identifier: 'a' }, /^clientTools must be an array/],
    ['a bad identifier', [{ ...PHOTO, identifier: '../x' }], /^clientTools\[0\]\.identifier must match/],
    ['a name over 64 characters', [{ ...PHOTO, apiName: 'p'.repeat(65) }], /^clientTools\[0\]\.apiName must match/],
    ['a non-object schema', [{ ...PHOTO, parameters: { type: 'string' } }], /^clientTools\[0\]\.parameters must be an object schema/],
    ['an invalid schema', [{ ...PHOTO, parameters: { type: 'object', properties: { zoom: { type: 'no-such-type' } } } }], /^clientTools\[0\]\.parameters is not a valid JSON Schema/],
    ['an unknown key', [{ ...PHOTO, secretKey: 'sk-live-123' }], /^clientTools\[0\]: unknown key/],
    ['the same name twice', [PHOTO, PHOTO], /^clientTools\[1\]: the tool name is declared twice/],
    ['more than 64 tools', Array.from({ length: 65 }, (_, i) => ({ ...PHOTO, apiName: `p${i}` })), /^clientTools holds at most 64 tools/],
    ['a local tool name', [{ ...PHOTO, identifier: 'clock', apiName: 'now' }], /^clientTools\[0\]: the name is taken by a local @Tool/],
    ['a configured client tool name', [{ ...PHOTO, identifier: 'browser', apiName: 'open' }], /^clientTools\[0\]: the name is taken by a configured client tool/],
    ['the built-in', [{ ...PHOTO, identifier: 'agents', apiName: 'call' }], /^clientTools\[0\]: the name is taken by the built-in/],
  ])('G1, G6: clientTools with %s is refused with InvalidClientToolsError naming the field, never the value', async (_what, clientTools, message) => {
    const error = await rejectionOf(app.runtime.execAgent({ agentId: 'camera', prompt: 'x', clientTools: clientTools as ClientToolDeclaration[] }));
    expect(error).toBeInstanceOf(InvalidClientToolsError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('sk-live-123');
  });
});
