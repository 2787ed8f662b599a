/**
 * Issue 14 (cost per step), queue mode: a step whose results are all its own and whose `afterStep` nothing
 * observes commits its end — the next `stepIndex` and the lease let go — with its last call's publish: one
 * commit less per tool step, the same run. A cancel that lands while the last call runs still ends the
 * operation `interrupted`, and no further step runs. Apps here boot with `observe: false` (a dispatcher
 * subscriber would observe `afterStep`).
 */
import { afterAll, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { DATABASE_URL, postgresDatabaseOption, uniqueSchemaName } from '../persistence/test-databases.js';
import { bootRuntime, eventually, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { REDIS_URL, dropPrefix, fastQueue, queueSuite, uniquePrefix } from './queue-kit.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

const describeWithServices = await queueSuite('queue/step-end-with-publish.spec.ts', 'the queue step end riding on the last publish');

const CONFIG = scriptedConfig({
  system: 'queue-step-end-test',
  models: {
    clock: [toolCalls(call('clock/now')), toolCalls(call('clock/now'), call('clock/now')), answer('done at {{lastToolResult}}')],
    gated: [toolCalls(call('gate/pass')), answer('a step after the cancel')],
  },
  agents: {
    assistant: { model: 'clock', tools: ['clock/now'] },
    waiter: { model: 'gated', tools: ['gate/pass'] },
  },
});

/** The gate's call blocks until the test opens it; `entered` says it is running. */
const gate = { entered: 0, open: () => undefined as void, opened: Promise.resolve() };
function closeGate(): void {
  gate.entered = 0;
  gate.opened = new Promise<void>((resolve) => (gate.open = resolve));
}

@Injectable()
class QueueStepTools {
  @Tool({ identifier: 'clock', apiName: 'now', description: 'time', parameters: { type: 'object', properties: {} } })
  now(): string {
    return 'noon';
  }

  @Tool({ identifier: 'gate', apiName: 'pass', description: 'waits for the test', parameters: { type: 'object', properties: {} } })
  async pass(): Promise<string> {
    gate.entered++;
    await gate.opened;
    return 'passed';
  }
}

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
}, 60_000);

/** One queue-mode app (API and worker in one process) on a schema and a queue prefix of its own. */
async function queueApp(observe: boolean): Promise<RuntimeApp> {
  const schema = uniqueSchemaName();
  const prefix = uniquePrefix() + (observe ? '-o' : '-u');
  const app = await bootRuntime({ config: CONFIG, providers: [QueueStepTools], database: postgresDatabaseOption(schema), observe, module: { mode: 'queue', redis: REDIS_URL, queue: fastQueue(prefix) } });
  cleanups.push(async () => {
    await app.close();
    await dropPrefix(prefix);
    const admin = new DataSource({ type: 'postgres', url: DATABASE_URL, poolSize: 1 });
    await admin.initialize();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => admin.destroy());
  });
  return app;
}

const conversation = async (app: RuntimeApp, operationId: string) =>
  (await app.store.messages(operationId)).map(({ role, content, toolCallId }) => ({ role, content, toolCallId: toolCallId === undefined ? undefined : 'call' }));

describeWithServices('queue mode: the step end rides on the last publish when nothing observes afterStep', () => {
  it('P1: unobserved, each tool step commits its end with its last result (one version less per tool step), and the run is the same', async () => {
    const unobservedApp = await queueApp(false);
    const observedApp = await queueApp(true);
    const unobserved = await within(unobservedApp.runtime.run('what time is it', { agentId: 'assistant' }), 'the unobserved run', 30_000);
    const observed = await within(observedApp.runtime.run('what time is it', { agentId: 'assistant' }), 'the observed run', 30_000);
    expect(unobserved).toMatchObject({ reason: 'done', content: 'done at noon' });
    expect(observed).toMatchObject({ reason: 'done', content: 'done at noon' });
    expect(await conversation(unobservedApp, unobserved.operationId)).toEqual(await conversation(observedApp, observed.operationId));
    const [a, b] = [await unobservedApp.store.getOperation(unobserved.operationId), await observedApp.store.getOperation(observed.operationId)];
    expect(a!.stepIndex).toBe(b!.stepIndex);
    // Two tool steps: two end commits fewer (queue mode's creator commits on_run_start either way).
    expect(b!.version - a!.version).toBe(2);
  }, 60_000);

  it('issue 14: a cancel while the merged last call of a step runs ends the operation interrupted; no step follows it', async () => {
    const app = await queueApp(false);
    closeGate();
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'waiter', prompt: 'x' });
    await eventually(() => gate.entered === 1, 'the gated call running');
    await app.runtime.cancel(operationId);
    gate.open();
    const result = await within(done, 'done', 30_000);
    expect(result.reason).toBe('interrupted');
    const messages = await conversation(app, operationId);
    expect(messages.map((m) => m.content)).not.toContain('a step after the cancel');
    expect((await app.store.getOperation(operationId))!.status).toBe('completed');
    expect(gate.entered).toBe(1);
  }, 60_000);
});
