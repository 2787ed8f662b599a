/**
 * SPEC F6 through real runs with the scripted model, on SQLite and on PostgreSQL: an approval may carry new
 * arguments. They are checked against the tool's JSON Schema and G6's limits before anything is stored
 * (a refusal names the path, never the value), recorded on the intervention with who decided, the call
 * runs with them, they are the effective `args` of its tool events, and `afterHumanIntervention` carries
 * `argsEdited: true`.
 */
import { Injectable } from '@nestjs/common';
import type { AfterHumanInterventionEvent, BeforeToolCallEvent } from '../../../src/index.js';
import { InvalidEditedArgumentsError } from '../../../src/runtime/runtime-errors.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import type { InterventionRecord } from '../../../src/persistence/records.js';
import { dropSchema, driverSuites, postgresDatabaseOption, uniqueSchemaName, type DriverName } from '../persistence/test-databases.js';
import { bootRuntime, eventually, guardUnhandledRejections, rejectionOf, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

const CONFIG = scriptedConfig({
  system: 'approve-edited-args',
  models: {
    paying: [toolCalls(call('pay/charge', { amount: 90, note: 'model' })), answer('{{lastToolResult}}')],
  },
  agents: {
    payer: { model: 'paying', tools: ['pay/*'], approval: ['^pay/'] },
  },
});

/** The arguments each execution received. */
const charged: Array<Record<string, unknown>> = [];

@Injectable()
class Payments {
  @Tool({
    identifier: 'pay',
    apiName: 'charge',
    description: 'charges',
    parameters: { type: 'object', properties: { amount: { type: 'number', maximum: 500 }, note: { type: 'string' } }, required: ['amount'], additionalProperties: false },
  })
  charge(args: Record<string, unknown>): string {
    charged.push(args);
    return `charged ${String(args['amount'])}`;
  }
}

guardUnhandledRejections();

const describeEachDriver = await driverSuites();

describeEachDriver('F6 approve with edited arguments on %s', (driver: DriverName) => {
  const schemas: string[] = [];
  let app: RuntimeApp;

  beforeEach(async () => {
    charged.length = 0;
    let database: string | undefined;
    if (driver === 'postgres') {
      const schema = uniqueSchemaName();
      schemas.push(schema);
      database = postgresDatabaseOption(schema);
    }
    app = await bootRuntime({ observe: true, config: CONFIG, providers: [Payments], ...(database ? { database } : {}) });
  }, 30_000);

  afterEach(async () => {
    await app.close();
  }, 30_000);

  afterAll(async () => {
    for (const schema of schemas) await dropSchema(schema);
  }, 30_000);

  /** Starts `payer` and waits for its pending approval. */
  async function waitingCharge(): Promise<{ operationId: string; toolCallId: string }> {
    const { operationId } = await app.runtime.execAgent({ agentId: 'payer', prompt: 'pay' });
    await eventually(async () => (await app.store.getOperation(operationId))?.status === 'waiting', 'the approval pause');
    return { operationId, toolCallId: (await app.store.interventions(operationId))[0]!.toolCallId };
  }

  const payloadsOf = <T>(operationId: string, point: string): T[] => app.events.filter((e) => e.operationId === operationId && e.point === point).map((e) => e.payload as T);

  it('F6: the call runs with the edited arguments, which are the effective args of its tool events; recorded with who decided; afterHumanIntervention carries argsEdited: true', async () => {
    const { operationId, toolCallId } = await waitingCharge();
    await app.runtime.approve(operationId, toolCallId, { args: { note: 'human', amount: 20 }, decidedBy: 'alice' });
    await expect(within(app.runtime.result(operationId), 'the result')).resolves.toMatchObject({ reason: 'done', content: 'charged 20' });
    expect(charged).toEqual([{ note: 'human', amount: 20 }]);
    for (const point of ['beforeToolCall', 'afterToolCall']) {
      expect(payloadsOf<BeforeToolCallEvent>(operationId, point).map((e) => e.args)).toEqual([{ note: 'human', amount: 20 }]);
    }
    expect(payloadsOf<AfterHumanInterventionEvent>(operationId, 'afterHumanIntervention')).toEqual([expect.objectContaining({ action: 'approve', toolCallId, argsEdited: true })]);
    const [item] = (await app.store.interventions(operationId)) as InterventionRecord[];
    expect(item).toMatchObject({ status: 'approved', decidedBy: 'alice', editedArgs: { note: 'human', amount: 20 } });
    // The model's own request stays as it made it in the conversation.
    expect((await app.store.messages(operationId)).find((m) => m.role === 'assistant')?.toolCalls?.[0]?.args).toEqual({ amount: 90, note: 'model' });
  });

  it('F6: an approval without arguments runs the model arguments, and afterHumanIntervention has no argsEdited', async () => {
    const { operationId, toolCallId } = await waitingCharge();
    await app.runtime.approve(operationId, toolCallId);
    await within(app.runtime.result(operationId), 'the result');
    expect(charged).toEqual([{ amount: 90, note: 'model' }]);
    expect(payloadsOf<AfterHumanInterventionEvent>(operationId, 'afterHumanIntervention')[0]).not.toHaveProperty('argsEdited');
  });

  it('F6: edited arguments the schema refuses, or over the G6 limits, are an InvalidEditedArgumentsError naming the path; nothing is stored', async () => {
    const { operationId, toolCallId } = await waitingCharge();
    const refused = await rejectionOf(app.runtime.approve(operationId, toolCallId, { args: { amount: 'a-distinctive-value' } }));
    expect(refused).toBeInstanceOf(InvalidEditedArgumentsError);
    expect(refused).toMatchObject({ code: 'invalid_arguments' });
    expect((refused as Error).message).toContain('/amount');
    expect((refused as Error).message).not.toContain('a-distinctive-value');
    await expect(app.runtime.approve(operationId, toolCallId, { args: { amount: 501 } })).rejects.toThrow(/\/amount/);
    let deep: Record<string, unknown> = { amount: 1 };
    for (let i = 0; i < 70; i++) deep = { amount: 1, note: 'x', nested: deep };
    await expect(app.runtime.approve(operationId, toolCallId, { args: deep })).rejects.toThrow('args: is nested deeper than 64 levels');
    await expect(app.runtime.approve(operationId, toolCallId, { args: { amount: 1, note: 'x'.repeat(1024 * 1024) } })).rejects.toThrow(/at most 1048576 bytes/);
    await expect(app.runtime.approve(operationId, toolCallId, { args: [] as unknown as Record<string, unknown> })).rejects.toThrow('args: must be a JSON object');

    // Nothing was stored: still pending, the operation still waits, no hook heard of a decision.
    expect(await app.store.interventions(operationId)).toEqual([expect.objectContaining({ status: 'pending' })]);
    expect((await app.store.interventions(operationId))[0]).not.toHaveProperty('editedArgs');
    expect((await app.store.getOperation(operationId))?.status).toBe('waiting');
    expect(payloadsOf(operationId, 'afterHumanIntervention')).toEqual([]);
    expect(charged).toEqual([]);
    await app.runtime.cancel(operationId);
  });
});
