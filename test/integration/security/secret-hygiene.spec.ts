/**
 * Secret hygiene (issue 6), end to end on one real scenario (see secret-hygiene-scenario.ts): after it ran,
 * every log line, every database row, every timeline record, every engine observe context and every
 * webhook payload is searched for the markers planted in the environment, the inbound access token, the
 * signing secret, the prompt, the tool arguments, the tool result and an error message.
 */
import { inspect } from 'node:util';
import { ToolCallContext, ToolRequestContext } from '../../../src/index.js';
import { hasBrand } from '../../../src/hooks/context-brand.js';
import { rowsContaining } from './database-dump.js';
import { CONVERSATION, MARKERS, ProviderRejectedError, SECRETS } from './secret-hygiene-fixtures.js';
import { runScenario, type ScenarioResult } from './secret-hygiene-scenario.js';

const MESSAGES = 'agent_hooks_messages';
const EVERYTHING: readonly string[] = [...SECRETS, ...CONVERSATION, MARKERS.error];

let scenario: ScenarioResult;

beforeAll(async () => {
  scenario = await runScenario();
}, 60_000);

function found(texts: readonly string[], needles: readonly string[]): string[] {
  return texts.filter((text) => needles.some((needle) => text.includes(needle)));
}

function tablesBut(...excluded: string[]): string[] {
  return [...scenario.dump.keys()].filter((table) => !excluded.includes(table));
}

function operationRow(id: string): Record<string, unknown> {
  const row = (scenario.dump.get('agent_hooks_operations') ?? []).map((json) => JSON.parse(json) as Record<string, unknown>).find((r) => r.id === id);
  expect(row).toBeDefined();
  return row!;
}

describe('the scenario carried every marker where it belongs (so their absence elsewhere means something)', () => {
  it('the conversation holds the prompt, the arguments and the result; the control saw the full result (B2)', () => {
    expect(rowsContaining(scenario.dump, [MARKERS.prompt], [MESSAGES])).not.toEqual([]);
    expect(rowsContaining(scenario.dump, [MARKERS.args], [MESSAGES])).not.toEqual([]);
    expect(rowsContaining(scenario.dump, [MARKERS.result], [MESSAGES])).not.toEqual([]);
    expect(scenario.controls.length).toBeGreaterThan(0);
    expect(scenario.controls.some((r) => r.body.includes(MARKERS.result) && r.body.includes(MARKERS.args))).toBe(true);
  });

  it('webhooks were signed and sent the env secret in the Authorization header, resolved at send time (W6)', () => {
    const deliveries = [...scenario.notifications, ...scenario.controls];
    expect(scenario.notifications.length).toBeGreaterThanOrEqual(10);
    for (const request of deliveries) {
      expect(request.headers.authorization).toBe(`Bearer ${MARKERS.env}`);
      expect(request.headers['webhook-signature']).toMatch(/^v1,/);
    }
    const stored = rowsContaining(scenario.dump, ['Bearer ${HOOK_TOKEN}'], ['agent_hooks_operation_hooks']);
    expect(stored.length).toBeGreaterThan(0);
  });

  it('the engine hooks observed the tool calls and the run error; the logger saw the failing hooks', () => {
    expect(scenario.observed.map((o) => o.point)).toEqual(expect.arrayContaining(['before_tool_call', 'after_tool_call', 'on_tool_error']));
    expect(scenario.runErrors.length).toBeGreaterThan(0);
    expect(scenario.lines.some((line) => line.includes('leaky-audit'))).toBe(true);
    expect(scenario.lines.some((line) => line.includes('op1-throwing-handler'))).toBe(true);
  });
});

describe('S1: logs', () => {
  it('S1: no log line, console call or stdout/stderr write holds a secret, the prompt, arguments, a result or an error message', () => {
    expect(found(scenario.lines, EVERYTHING)).toEqual([]);
  });
});

describe('S2: storage (DESIGN §5)', () => {
  it('S2: no table but agent_hooks_messages holds a secret, the prompt, arguments or a result', () => {
    expect(scenario.dump.size).toBeGreaterThan(1);
    expect(rowsContaining(scenario.dump, [...SECRETS, ...CONVERSATION], tablesBut(MESSAGES))).toEqual([]);
  });

  it('S2: the published conversation holds no token, env secret or signing secret either', () => {
    expect(rowsContaining(scenario.dump, SECRETS, [MESSAGES])).toEqual([]);
  });
});

describe('S1: the timeline', () => {
  it('S1: agent_hooks_hook_outcomes rows and the outcome records hold no marker', () => {
    const rows = scenario.dump.get('agent_hooks_hook_outcomes') ?? [];
    expect(rows.some((row) => row.includes('op1-control'))).toBe(true);
    expect(found(rows, EVERYTHING)).toEqual([]);
    expect(found(scenario.outcomes.map((o) => JSON.stringify(o)), EVERYTHING)).toEqual([]);
  });
});

describe('E9: observe-only engine contexts', () => {
  it('E9: before_tool_call gets a ToolRequestContext, after_tool_call / on_tool_error a ToolCallContext, with no marker', () => {
    expect(scenario.observed.length).toBeGreaterThanOrEqual(3);
    for (const { point, invocation } of scenario.observed) {
      expect(hasBrand(invocation.payload, point === 'before_tool_call' ? ToolRequestContext.brand : ToolCallContext.brand)).toBe(true);
      const views = [JSON.stringify(invocation.payload), inspect(invocation.payload, { depth: Infinity }), JSON.stringify(invocation), inspect(invocation, { depth: Infinity })];
      expect(found(views, EVERYTHING)).toEqual([]);
    }
  });
});

describe('S2/B2: webhook payloads', () => {
  it('S2: no notification or control body carries the HOOK_TOKEN value, the inbound access token or the signing secret', () => {
    const bodies = [...scenario.notifications, ...scenario.controls].map((r) => r.body);
    expect(found(bodies, SECRETS)).toEqual([]);
    const otherHeaders = [...scenario.notifications, ...scenario.controls].map((r) => JSON.stringify({ ...r.headers, authorization: undefined }));
    expect(found(otherHeaders, SECRETS)).toEqual([]);
  });
});

describe('S3: on_run_error', () => {
  it('S3/E2: the hook gets the raised error itself and records its type; run() rejects with that same error', () => {
    expect(scenario.runRejection).toBeInstanceOf(ProviderRejectedError);
    expect(scenario.runErrors.map((e) => e.type)).toEqual(['ProviderRejectedError', 'ProviderRejectedError']);
    expect(scenario.runErrors.some((e) => e.raw === scenario.runRejection)).toBe(true);
  });

  // Fails at commit b2a31df, whose `finish()` stored `error.message` (here it echoes the conversation) in
  // agent_hooks_operations.error_message; guards the type-only fix.
  it('S3: the failed operation row records the error type, not its message', () => {
    const row = operationRow(scenario.failedOperationId);
    expect(row).toMatchObject({ reason: 'error', error_type: 'ProviderRejectedError' });
    expect(String(row.error_message ?? '')).not.toContain(MARKERS.error);
    expect(rowsContaining(scenario.dump, [MARKERS.error], tablesBut(MESSAGES))).toEqual([]);
  });
});
