/**
 * The plain run of the trace test on PostgreSQL (DESIGN §5, §11): the same hook order, the same messages
 * published, the operation and its caller hooks round-tripped, in a schema of this file's own (dropped in
 * afterAll). An unreachable PostgreSQL fails under CI=true; elsewhere the test is skipped with a loud warning.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DATABASE_URL, postgresDatabaseOption, postgresSuite, uniqueSchemaName } from '../persistence/test-databases.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { bootRuntime, guardUnhandledRejections, pointsOf, within, type RuntimeApp } from './runtime-test-kit.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

/** The model-call points (K1) around each model call are traced in model-call-hooks.spec.ts; this file traces the rest. */
const MODEL_CALL_POINTS = new Set(['before_model_request', 'beforeModelCall', 'onModelCallError', 'after_model_response', 'afterModelCall']);
const withoutModelCall = (points: readonly string[]) => points.filter((point) => !MODEL_CALL_POINTS.has(point));

const CONFIG = scriptedConfig({
  system: 'postgres-run-test',
  models: {
    plain: { script: [toolCalls(call('clock/now')), answer('It is {{lastToolResult}}.')], costPerTokenUsd: 0.001 },
  },
  agents: {
    assistant: { model: 'plain', tools: ['clock/*'] },
  },
});

@Injectable()
class Clock {
  @Tool({ identifier: 'clock', apiName: 'now', description: 'time', parameters: { type: 'object', properties: {} } })
  now(): string {
    return '2026-11-30T00:00:00Z';
  }
}

guardUnhandledRejections();

// Probed at collection time: without PostgreSQL the test shows as skipped (a failure under CI=true).
const describeOnPostgres = await postgresSuite('runtime/postgres-run.spec.ts', 'the PostgreSQL run');

const schema = uniqueSchemaName();
let app: RuntimeApp | undefined;
let receiver: Server | undefined;
let base = '';
const notified: string[] = [];

// Top-level hooks run only when the describe below is not skipped.
beforeAll(async () => {
  receiver = createServer((req, res) => {
    notified.push(req.headers.authorization ?? '');
    req.resume();
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  process.env.PG_HOOK_TOKEN = 'pg-token-value';
  app = await bootRuntime({ observe: true, config: CONFIG, providers: [Clock], database: postgresDatabaseOption(schema), webhooks: { allowNetworks: ['127.0.0.0/8'] } });
}, 30_000);

afterAll(async () => {
  await app?.close();
  delete process.env.PG_HOOK_TOKEN;
  if (receiver) await new Promise<void>((resolve) => receiver!.close(() => resolve()));
  const admin = new DataSource({ type: 'postgres', url: DATABASE_URL, connectTimeoutMS: 5000, poolSize: 1 });
  await admin.initialize();
  try {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await admin.destroy();
  }
}, 30_000);

describeOnPostgres('a plain run on PostgreSQL', () => {
  it('same order, same published messages, operation and caller hooks round-tripped', async () => {
    if (!app) throw new Error('the app did not boot');
    const { operationId, done } = await app.runtime.execAgent({
      agentId: 'assistant',
      prompt: 'What time is it?',
      hooks: [{ id: 'notify', type: 'onComplete', webhook: { url: `${base}/done`, headers: { Authorization: 'Bearer ${PG_HOOK_TOKEN}' }, allowedEnvVars: ['PG_HOOK_TOKEN'] } }],
    });
    const result = await within(done, 'done', 20_000);
    expect(result).toMatchObject({ status: 'completed', reason: 'done', content: 'It is 2026-11-30T00:00:00Z.' });

    expect(withoutModelCall(pointsOf(app.events, operationId))).toEqual([
      'on_run_start',
      'beforeStep',
      'before_tool_call',
      'beforeToolCall',
      'transform_tool_result',
      'afterToolCall',
      'after_tool_call',
      'afterStep',
      'beforeStep',
      'afterStep',
      'onComplete',
      'on_run_end',
    ]);
    const messages = await app.store.messages(operationId);
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'What time is it?'],
      ['assistant', ''],
      ['tool', '2026-11-30T00:00:00Z'],
      ['assistant', 'It is 2026-11-30T00:00:00Z.'],
    ]);
    expect(messages[1]!.toolCalls).toEqual([{ id: 'call_0_0', identifier: 'clock', apiName: 'now', args: {} }]);
    expect(messages[2]).toMatchObject({ toolCallId: 'call_0_0', identifier: 'clock', apiName: 'now' });
    expect(messages.map((m) => m.seq)).toEqual([...messages.map((m) => m.seq)].sort((a, b) => a - b));

    const operation = await app.store.getOperation(operationId);
    expect(operation).toMatchObject({ agentId: 'assistant', status: 'completed', reason: 'done', stepIndex: 2 });
    expect(operation!.usage).toEqual(result.usage);
    expect(operation!.usage.costUsd).toBeGreaterThan(0);
    expect(await app.store.callerHooks(operationId)).toEqual([
      expect.objectContaining({ hookId: 'notify', type: 'onComplete', webhook: expect.objectContaining({ headers: { Authorization: 'Bearer ${PG_HOOK_TOKEN}' } }) }),
    ]);
    expect(JSON.stringify(await app.store.callerHooks(operationId))).not.toContain('pg-token-value');
    expect(notified).toEqual(['Bearer pg-token-value']);
    expect(app.registry.operationCount).toBe(0);
  });
});
