/**
 * SPEC K1/K3 in queue mode: the step runs on a worker, which restores the caller's webhooks (W3) and
 * governs the model call with them — a `beforeModelCall` control deny calls no model, an `afterModelCall`
 * control deny replaces the answer and drops its tool calls — and the operation completes `blocked`.
 */
import { afterAll, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Injectable } from '@nestjs/common';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { completion, sendJson, startChatCompletionsServer, type ChatCompletionsServer } from '../models/chat-completions-server.js';
import { dropSchema, postgresDatabaseOption, uniqueSchemaName } from '../persistence/test-databases.js';
import { bootRuntime, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { REDIS_URL, dropPrefix, fastQueue, queueSuite, uniquePrefix } from './queue-kit.js';

const describeWithServices = await queueSuite('queue/model-call-hooks.spec.ts', 'the model-call controls in queue mode');

const CONFIG = `
system: queue-model-hooks-test
models:
  remote: { provider: openai, model: gpt-test, baseUrlEnv: QMCH_LLM_BASE, apiKeyEnv: QMCH_LLM_KEY }
agents:
  assistant: { model: remote, tools: [ "clock/now" ] }
`;

const executions = { now: 0 };

@Injectable()
class QueueClock {
  @Tool({ identifier: 'clock', apiName: 'now', description: 'time', parameters: { type: 'object', properties: {} } })
  now(): string {
    executions.now++;
    return 'noon';
  }
}

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
}, 60_000);

async function start(): Promise<{ app: RuntimeApp; llm: ChatCompletionsServer; guard: string; bodies: string[] }> {
  const llm = await startChatCompletionsServer();
  const call = { id: 'call_1', type: 'function', function: { name: 'clock__now', arguments: '{}' } };
  llm.handle((_call, res) => sendJson(res, 200, completion({ content: 'secret plan', tool_calls: [call] }, { prompt_tokens: 4, completion_tokens: 2 })));
  const bodies: string[] = [];
  const receiver: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      sendJson(res, 200, { decision: 'deny', reason: `denied at ${req.url ?? ''}` });
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  process.env.QMCH_LLM_BASE = llm.baseUrl;
  process.env.QMCH_LLM_KEY = 'test-key';
  const schema = uniqueSchemaName();
  const prefix = uniquePrefix();
  const app = await bootRuntime({
    config: CONFIG,
    providers: [QueueClock],
    database: postgresDatabaseOption(schema),
    webhooks: { allowNetworks: ['127.0.0.0/8'] },
    module: { mode: 'queue', redis: REDIS_URL, queue: fastQueue(prefix) },
  });
  cleanups.push(async () => {
    await app.close();
    await llm.close();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    await dropPrefix(prefix);
    await dropSchema(schema);
  });
  return { app, llm, guard: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`, bodies };
}

describeWithServices('queue mode: model-call controls', () => {
  it('K3: a beforeModelCall webhook deny on a worker calls no model and completes blocked', async () => {
    const { app, llm, guard } = await start();
    const { operationId, done } = await app.runtime.execAgent({
      agentId: 'assistant',
      prompt: 'hello',
      hooks: [{ id: 'gate', type: 'beforeModelCall', webhook: { url: `${guard}/before`, responseHandling: 'toolCall' } }],
    });
    expect(await within(done, 'done', 30_000)).toMatchObject({ reason: 'blocked', content: 'denied at /before' });
    expect(llm.calls).toHaveLength(0);
    expect((await app.store.getOperation(operationId))?.reason).toBe('blocked');
  }, 40_000);

  it('K3: an afterModelCall webhook deny on a worker drops the answer and its tool calls before they are stored or run', async () => {
    executions.now = 0;
    const { app, llm, guard, bodies } = await start();
    const { operationId, done } = await app.runtime.execAgent({
      agentId: 'assistant',
      prompt: 'hello',
      hooks: [{ id: 'guard', type: 'afterModelCall', webhook: { url: `${guard}/after`, responseHandling: 'toolCall' } }],
    });
    expect(await within(done, 'done', 30_000)).toMatchObject({ reason: 'blocked', content: 'denied at /after' });
    expect(llm.calls).toHaveLength(1);
    expect(executions.now).toBe(0);
    const messages = await app.store.messages(operationId);
    expect(messages.map((m) => [m.role, m.content, m.error])).toEqual([
      ['user', 'hello', undefined],
      ['assistant', 'denied at /after', 'hook_denied'],
    ]);
    // The control judged the answer in full (K2).
    expect(bodies[0]).toContain('secret plan');
  }, 40_000);
});
