/**
 * SPEC F4 (budgets) and F5 (the loop guard) through real runs with the scripted model, on SQLite and on
 * PostgreSQL: the call over a budget never runs — no before-hook sees it, the tool is not executed — the
 * operation ends `tool_limit` / `token_limit`, and `onComplete`, the stored error summary (the operation's
 * view) and `run()`'s error name the limit. The counts come from what was committed: a new process on the
 * same database counts the calls the first one ran.
 */
import { Injectable } from '@nestjs/common';
import type { OnCompleteEvent } from '../../../src/index.js';
import { RunLimitError } from '../../../src/runtime/runtime-errors.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { operationView } from '../../../src/runtime/reading/operation-views.js';
import { dropSchema, driverSuites, postgresDatabaseOption, uniqueSchemaName, type DriverName } from '../persistence/test-databases.js';
import { bootRuntime, eventually, guardUnhandledRejections, pointsOf, rejectionOf, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

const CONFIG = scriptedConfig({
  system: 'budgets-test',
  models: {
    threeClocks: [toolCalls(call('clock/now'), call('clock/now'), call('clock/now')), answer('never reached')],
    payTwice: [toolCalls(call('pay/charge', { amount: 1 })), toolCalls(call('clock/now')), toolCalls(call('pay/charge', { amount: 2 })), answer('never reached')],
    wordy: [toolCalls(call('clock/now')), answer('never reached')],
    failing: [toolCalls(call('flaky/fail', { a: 1, b: [1, 2] })), toolCalls(call('flaky/fail', { b: [1, 2], a: 1 })), toolCalls(call('flaky/fail', { a: 1, b: [1, 2] })), toolCalls(call('flaky/fail', { b: [1, 2], a: 1 })), answer('never reached')],
    approvedThenMore: [toolCalls(call('clock/now'), call('pay/charge', { amount: 3 })), toolCalls(call('clock/now')), answer('never reached')],
  },
  agents: {
    capped: { model: 'threeClocks', tools: ['clock/*'], limits: { maxToolCalls: 2 } },
    payer: { model: 'payTwice', tools: ['clock/*', 'pay/*'], limits: { perTool: { 'pay/*': 1 } } },
    talker: { model: 'wordy', tools: ['clock/*'], limits: { maxTokens: 5 } },
    looper: { model: 'failing', tools: ['flaky/*'] },
    restarted: { model: 'approvedThenMore', tools: ['clock/*', 'pay/*'], approval: ['^pay/'], limits: { maxToolCalls: 2 } },
  },
});

/** Counts executions per tool: `runs` is shared by every app booted in a test. */
const runs = { clock: 0, charge: 0, fail: 0 };

@Injectable()
class Tools {
  @Tool({ identifier: 'clock', apiName: 'now', description: 'time', parameters: { type: 'object', properties: {} } })
  now(): string {
    runs.clock++;
    return '2026-12-03T00:00:00Z';
  }

  @Tool({ identifier: 'pay', apiName: 'charge', description: 'charges', parameters: { type: 'object', properties: { amount: { type: 'number' } } } })
  charge(): string {
    runs.charge++;
    return 'charged';
  }

  @Tool({ identifier: 'flaky', apiName: 'fail', description: 'always fails', parameters: { type: 'object' } })
  fail(): string {
    runs.fail++;
    throw new Error('the service is down');
  }
}

guardUnhandledRejections();

const describeEachDriver = await driverSuites();

describeEachDriver('F4/F5 budgets on %s', (driver: DriverName) => {
  const schemas: string[] = [];
  const apps: RuntimeApp[] = [];
  let app: RuntimeApp;

  /** A database of the test's own: a SQLite file in the app's folder, or a fresh PostgreSQL schema. */
  const boot = async (database?: string): Promise<RuntimeApp> => {
    const booted = await bootRuntime({ observe: true, config: CONFIG, providers: [Tools], ...(database ? { database } : {}) });
    apps.push(booted);
    return booted;
  };
  const freshDatabase = (): string | undefined => {
    if (driver === 'sqlite') return undefined;
    const schema = uniqueSchemaName();
    schemas.push(schema);
    return postgresDatabaseOption(schema);
  };

  beforeEach(async () => {
    runs.clock = runs.charge = runs.fail = 0;
    app = await boot(freshDatabase());
  }, 30_000);

  afterEach(async () => {
    for (const booted of apps.splice(0)) await booted.close();
  }, 30_000);

  afterAll(async () => {
    for (const schema of schemas) await dropSchema(schema);
  }, 30_000);

  const onComplete = (booted: RuntimeApp, operationId: string): OnCompleteEvent | undefined =>
    booted.events.find((e) => e.operationId === operationId && e.point === 'onComplete')?.payload as OnCompleteEvent | undefined;

  it('F4: a call over maxToolCalls never runs and the operation ends tool_limit', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'capped', prompt: 'time thrice' });
    await expect(within(done, 'done')).resolves.toMatchObject({ status: 'completed', reason: 'tool_limit' });
    expect(runs.clock).toBe(2);
    // The third call never entered the chain: two before-hooks, two results, no third anything.
    expect(pointsOf(app.events, operationId, ['before_tool_call', 'beforeToolCall'])).toEqual(['before_tool_call', 'beforeToolCall', 'before_tool_call', 'beforeToolCall']);
    expect((await app.store.messages(operationId)).filter((m) => m.role === 'tool')).toHaveLength(2);
    expect(onComplete(app, operationId)).toMatchObject({ reason: 'tool_limit', limit: { name: 'maxToolCalls', value: 2, tool: 'clock/now' } });
    const operation = await app.store.getOperation(operationId);
    expect(operationView(operation!, [])).toMatchObject({
      reason: 'tool_limit',
      error: { type: 'maxToolCalls', summary: 'the tool call limit maxToolCalls (2) was reached: clock/now did not run' },
    });
    const error = await rejectionOf(app.runtime.run('again', { agentId: 'capped' }));
    expect(error).toBeInstanceOf(RunLimitError);
    expect(error).toMatchObject({ reason: 'tool_limit', limit: { name: 'maxToolCalls', value: 2 } });
  });

  it('F4: a perTool cap counts the calls its glob selects across steps; the call over it never runs', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'payer', prompt: 'pay twice' });
    await expect(within(done, 'done')).resolves.toMatchObject({ reason: 'tool_limit' });
    expect(runs).toEqual({ clock: 1, charge: 1, fail: 0 });
    expect(onComplete(app, operationId)).toMatchObject({ limit: { name: 'perTool', value: 1, pattern: 'pay/*', tool: 'pay/charge' } });
    expect((await app.store.getOperation(operationId))?.errorSummary).toBe('the perTool cap "pay/*" (1) was reached: pay/charge did not run');
  });

  it('F4: reaching maxTokens ends the operation token_limit before the next model call', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'talker', prompt: 'what time is it, in a long answer please' });
    const result = await within(done, 'done');
    expect(result).toMatchObject({ reason: 'token_limit' });
    expect(result.usage.inputTokens + result.usage.outputTokens).toBeGreaterThanOrEqual(5);
    // One model call: the second step was refused before the model was asked.
    expect((await app.store.messages(operationId)).map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(onComplete(app, operationId)).toMatchObject({ reason: 'token_limit', limit: { name: 'maxTokens', value: 5 } });
    expect(operationView((await app.store.getOperation(operationId))!, [])).toMatchObject({ error: { type: 'maxTokens', summary: 'the token limit maxTokens (5) was reached' } });
  });

  it('F5: the same tool failing maxRepeatedFailures times in a row with the same canonical arguments: the next identical call never runs, tool_limit names the tool', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'looper', prompt: 'keep trying' });
    await expect(within(done, 'done')).resolves.toMatchObject({ reason: 'tool_limit' });
    // Key order differs between the calls: still the same call (DESIGN §12). Three failures, no fourth run.
    expect(runs.fail).toBe(3);
    expect(pointsOf(app.events, operationId, ['beforeToolCall'])).toHaveLength(3);
    expect(onComplete(app, operationId)).toMatchObject({ reason: 'tool_limit', limit: { name: 'maxRepeatedFailures', value: 3, tool: 'flaky/fail' } });
    expect((await app.store.getOperation(operationId))?.errorSummary).toContain('flaky/fail failed 3 times in a row');
  });

  it('F4: the count is what was committed — a process started on the same database counts the calls the first ran', async () => {
    const database = driver === 'sqlite' ? `sqlite:${app.dir}/shared.sqlite` : freshDatabase()!;
    const first = await boot(database);
    const { operationId } = await first.runtime.execAgent({ agentId: 'restarted', prompt: 'time, then pay' });
    // clock/now ran, pay/charge waits for its approval.
    await eventually(async () => (await first.store.getOperation(operationId))?.status === 'waiting', 'the approval pause');
    expect(runs.clock).toBe(1);
    await first.close();
    apps.splice(apps.indexOf(first), 1);

    const second = await boot(database);
    const toolCallId = (await second.store.interventions(operationId))[0]!.toolCallId;
    await second.runtime.approve(operationId, toolCallId);
    await expect(within(second.runtime.result(operationId), 'the result')).resolves.toMatchObject({ reason: 'tool_limit' });
    // The approved charge was the second call; the next step's clock call is the third: refused.
    expect(runs).toEqual({ clock: 1, charge: 1, fail: 0 });
    expect(onComplete(second, operationId)).toMatchObject({ limit: { name: 'maxToolCalls', value: 2, tool: 'clock/now' } });
  });
});
