/**
 * DESIGN §4, cancellation without polling in queue mode: while a worker runs a step it follows the
 * operation's events; a cancel committed by the API process (another app on the same PostgreSQL) reaches
 * it through LISTEN/NOTIFY and aborts the running tool call. The operation ends `interrupted`, once.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import type { LocalToolContext } from '../../../src/runtime/tools/local-tool.js';
import { dropSchema, postgresDatabaseOption, uniqueSchemaName } from '../persistence/test-databases.js';
import { bootRuntime, deferred, pointsOf, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { REDIS_URL, dropPrefix, fastQueue, queueSuite, uniquePrefix } from './queue-kit.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

const describeWithServices = await queueSuite('queue/cancel-watch.spec.ts', 'the queue worker\'s event-driven cancel watch');

const CONFIG = scriptedConfig({
  system: 'cancel-watch',
  models: {
    patient: [toolCalls(call('wait/forever')), answer('never reached')],
  },
  agents: {
    waiter: { model: 'patient', tools: ['wait/*'] },
  },
});

const tool = { started: deferred(), aborted: deferred() };

@Injectable()
class WaitingTools {
  @Tool({ identifier: 'wait', apiName: 'forever', description: 'waits for its signal', parameters: { type: 'object', properties: {} }, timeoutMs: 60_000 })
  async forever(_args: Record<string, unknown>, context: LocalToolContext): Promise<string> {
    tool.started.resolve();
    await new Promise<void>((resolve) => context.signal.addEventListener('abort', () => resolve(), { once: true }));
    tool.aborted.resolve();
    return 'stopped';
  }
}

const schema = uniqueSchemaName();
const prefix = uniquePrefix();
let api: RuntimeApp;
let worker: RuntimeApp;
/**
 * Leases far longer than the test: the completion also moves the lease on, and the worker would notice
 * that at its next renewal (a third of the lease) — here only the event can abort the step in time.
 */
const LONG_LEASE_MS = 600_000;

beforeAll(async () => {
  const common = { config: CONFIG, providers: [WaitingTools], database: postgresDatabaseOption(schema) };
  api = await bootRuntime({ observe: true, ...common, module: { mode: 'queue', redis: REDIS_URL, queue: fastQueue(prefix, { worker: false, leaseMs: LONG_LEASE_MS }) } });
  worker = await bootRuntime({ observe: true, ...common, module: { mode: 'queue', redis: REDIS_URL, queue: fastQueue(prefix, { leaseMs: LONG_LEASE_MS }) } });
}, 60_000);

afterAll(async () => {
  await worker?.close();
  await api?.close();
  await dropPrefix(prefix);
  await dropSchema(schema);
}, 60_000);

describeWithServices('queue worker cancel watch', () => {
  it('DESIGN §4 events: a cancel committed in the API process aborts the step running on the worker', async () => {
    const { operationId, done } = await api.runtime.execAgent({ agentId: 'waiter', prompt: 'wait' });
    await within(tool.started.promise, 'the tool started on the worker', 30_000);
    await api.runtime.cancel(operationId);
    await within(tool.aborted.promise, 'the running tool call aborted on the worker (its lease renewal is minutes away)', 20_000);
    expect((await within(done, 'done', 30_000)).reason).toBe('interrupted');
    expect(pointsOf(api.events, operationId, ['beforeStep'])).toEqual([]); // the step ran on the worker
  }, 60_000);
});
