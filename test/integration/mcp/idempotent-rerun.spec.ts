/**
 * SPEC F2 (and G2 as amended) on both drivers, in one process: an approved call already claimed by an
 * executor that never published — what a process killed mid-call leaves — runs again when its tool is
 * declared idempotent (`idempotent: true` on the MCP server in agents.yaml, or on `@Tool`), with the same
 * key, and the server deduplicates the effect; an approved call of a tool not declared idempotent gets the
 * "outcome unknown" receipt and is not run. The kill -9 with real processes is test/e2e/idempotent-rerun.spec.ts.
 */
import { Injectable } from '@nestjs/common';
import type { LocalToolContext } from '../../../src/index.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { appDatabases, type DriverName } from '../persistence/test-databases.js';
import { bootRuntime, eventually, guardUnhandledRejections, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { startKeyedMcpServer, type KeyedMcpServer } from './keyed-mcp-server.js';

const config = (url: string) => `
system: f2-rerun
mcpServers:
  pay: { url: "${url}", idempotent: true }
  payplain: { url: "${url}" }
models:
${[
  ['pay', 'charge', '{ amount: 5 }'],
  ['payplain', 'charge', '{ amount: 7 }'],
  ['ledger', 'record', '{}'],
  ['ledger', 'append', '{}'],
]
  .map(([identifier, apiName, args]) => `  ${identifier}_${apiName}:\n    provider: scripted\n    costPerTokenUsd: 0\n    script:\n      - toolCalls: [ { identifier: ${identifier}, apiName: ${apiName}, args: ${args} } ]\n      - content: "saw: {{lastToolResult}}"`)
  .join('\n')}
agents:
  idempotentMcp: { model: pay_charge, tools: [ "mcp:pay" ], approval: [ "charge$" ] }
  plainMcp: { model: payplain_charge, tools: [ "mcp:payplain" ], approval: [ "charge$" ] }
  idempotentLocal: { model: ledger_record, tools: [ "ledger/*" ], approval: [ "^ledger/" ] }
  plainLocal: { model: ledger_append, tools: [ "ledger/*" ], approval: [ "^ledger/" ] }
`;

const localKeys: string[] = [];

@Injectable()
class Ledger {
  @Tool({ identifier: 'ledger', apiName: 'record', description: 'idempotent', parameters: { type: 'object', properties: {} }, idempotent: true })
  record(_args: Record<string, unknown>, context: LocalToolContext): string {
    localKeys.push(context.idempotencyKey);
    return 'recorded';
  }

  @Tool({ identifier: 'ledger', apiName: 'append', description: 'not idempotent', parameters: { type: 'object', properties: {} } })
  append(_args: Record<string, unknown>, context: LocalToolContext): string {
    localKeys.push(context.idempotencyKey);
    return 'appended';
  }
}

guardUnhandledRejections();

const databases = await appDatabases('f2-rerun');
let pay: KeyedMcpServer;

beforeAll(async () => {
  pay = await startKeyedMcpServer();
});

afterAll(async () => {
  await pay?.close();
});

databases.describeEach('F2 an approved call claimed by an executor that died (%s)', (driver: DriverName) => {
  let app: RuntimeApp;
  beforeAll(async () => {
    app = await bootRuntime({ config: config(pay.url), providers: [Ledger], database: databases.databaseFor(driver, 'f2') });
  }, 30_000);
  afterAll(() => app?.close());

  /** Starts the agent, waits for its approval, claims the call for a dead executor, then approves it. */
  async function approvedAfterDeadClaim(agentId: string) {
    const { operationId, done } = await app.runtime.execAgent({ agentId, prompt: 'go' });
    void done.catch(() => undefined);
    await eventually(async () => (await app.store.interventions(operationId)).length === 1, 'the approval is pending');
    const [pending] = await app.store.interventions(operationId);
    expect(await app.store.claim(operationId, pending!.toolCallId, 'a-process-that-was-killed')).toBe(true);
    await app.runtime.approve(operationId, pending!.toolCallId);
    const result = await within(app.runtime.result(operationId), 'the operation ends', 20_000);
    const tools = (await app.store.messages(operationId)).filter((m) => m.role === 'tool');
    return { result, tools, toolCallId: pending!.toolCallId };
  }

  it('F2: an idempotent MCP tool (server idempotent: true) runs again with the key; one effect, one published result', async () => {
    const before = pay.calls.length;
    const { result, tools } = await approvedAfterDeadClaim('idempotentMcp');
    expect(result).toMatchObject({ reason: 'done', content: 'saw: charged 5' });
    expect(tools).toEqual([expect.objectContaining({ success: true, content: 'charged 5' })]);
    const calls = pay.calls.slice(before);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.metaKey).toMatch(/^nah_/);
    expect(calls[0]!.headerKey).toBe(calls[0]!.metaKey);
    expect(pay.effects.get(calls[0]!.metaKey!)).toBe(1);
  });

  it('F2: an idempotent @Tool runs again with its key', async () => {
    localKeys.length = 0;
    const { result, tools } = await approvedAfterDeadClaim('idempotentLocal');
    expect(result).toMatchObject({ reason: 'done' });
    expect(tools).toEqual([expect.objectContaining({ success: true, content: 'recorded' })]);
    expect(localKeys).toHaveLength(1);
  });

  it.each([
    ['an MCP tool', 'plainMcp'],
    ['a @Tool', 'plainLocal'],
  ])('F2/G2: %s not declared idempotent is not run: the outcome-unknown receipt is published', async (_what, agentId) => {
    const before = pay.calls.length;
    localKeys.length = 0;
    const { result, tools } = await approvedAfterDeadClaim(agentId);
    expect(result).toMatchObject({ reason: 'done' });
    expect(tools).toEqual([expect.objectContaining({ success: false, state: { execution: 'unknown_outcome' } })]);
    expect(pay.calls.length).toBe(before);
    expect(localKeys).toEqual([]);
  });
});
