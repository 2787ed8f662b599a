/**
 * SPEC F4/F5 as pure functions over a committed conversation: canonical arguments ignore key order (DESIGN
 * §12), the loop guard counts identical failures in a row only, calls G1 refused are not counted, and a
 * limit round-trips through what the terminal transition stores.
 */
import type { ModelToolCall } from '../../../src/runtime/models/chat-model.js';
import { DEFAULT_MAX_REPEATED_FAILURES, type AgentLimits } from '../../../src/runtime/agent-directory.port.js';
import { callLimitReached, stepLimitReached } from '../../../src/runtime/budgets.js';
import { canonicalArgs } from '../../../src/runtime/canonical-args.js';
import { limitRecord, limitSummary, storedLimit } from '../../../src/runtime/run-limits.js';
import type { StoredMessage } from '../../../src/runtime/runtime-store.port.js';
import { compileToolPattern } from '../../../src/runtime/tools/tool-pattern.js';
import type { ToolDefinition, ToolOffer } from '../../../src/runtime/tools/tool-types.js';

describe('F5 canonical arguments', () => {
  it('ignore key order at every depth, keep array order, and keep a __proto__ key as a plain key', () => {
    expect(canonicalArgs({ b: 1, a: { d: [2, 1], c: null } })).toBe(canonicalArgs({ a: { c: null, d: [2, 1] }, b: 1 }));
    expect(canonicalArgs({ a: [1, 2] })).not.toBe(canonicalArgs({ a: [2, 1] }));
    expect(canonicalArgs(JSON.parse('{"__proto__": {"x": 1}, "a": 1}'))).toBe('{"__proto__":{"x":1},"a":1}');
    expect(canonicalArgs({ a: 1 })).not.toBe(canonicalArgs({ a: '1' }));
  });
});

const tool = (identifier: string, apiName: string, extra: Partial<ToolDefinition> = {}): ToolDefinition => ({
  identifier,
  apiName,
  description: '',
  parameters: { type: 'object' },
  requiresApproval: false,
  deferred: false,
  source: 'local',
  ...extra,
});

const OFFER: ToolOffer = {
  tools: [tool('clock', 'now'), tool('pay', 'charge'), tool('kb', 'search', { source: 'mcp', serverId: 'kb' })],
  get(identifier, apiName) {
    return this.tools.find((t) => t.identifier === identifier && t.apiName === apiName);
  },
};

let seq = 0;
/** One step: the assistant's calls and, for each, its outcome (`ok`, `failed`, `unavailable`) or none (pending). */
function step(calls: Array<[string, Record<string, unknown>, ('ok' | 'failed' | 'unavailable')?]>): StoredMessage[] {
  const toolCalls: ModelToolCall[] = calls.map(([name, args]) => {
    const [identifier, apiName] = name.split('/') as [string, string];
    return { id: `call_${++seq}`, identifier, apiName, args };
  });
  const messages: StoredMessage[] = [{ id: `m${++seq}`, seq, role: 'assistant', content: '', toolCalls }];
  calls.forEach(([, , outcome], i) => {
    if (outcome === undefined) return;
    const call = toolCalls[i]!;
    messages.push({
      id: `m${++seq}`,
      seq,
      role: 'tool',
      content: outcome === 'ok' ? 'fine' : 'Error: no',
      toolCallId: call.id,
      identifier: call.identifier,
      apiName: call.apiName,
      success: outcome === 'ok',
      ...(outcome === 'unavailable' ? { state: { error: { type: 'tool_not_available' } } } : {}),
    });
  });
  return messages;
}

/** Decides the first call of a new last step, after `history`. */
function decide(limits: Partial<AgentLimits>, history: StoredMessage[][], next: [string, Record<string, unknown>]): ReturnType<typeof callLimitReached> {
  const last = step([next]);
  const messages = [...history.flat(), ...last];
  const assistant = last[0]!;
  return callLimitReached({
    limits: { maxSteps: 10, maxRepeatedFailures: DEFAULT_MAX_REPEATED_FAILURES, ...limits },
    offer: OFFER,
    messages,
    assistantId: assistant.id,
    callIndex: 0,
    call: assistant.toolCalls![0]!,
  });
}

describe('F4 budgets over the committed conversation', () => {
  it('maxToolCalls counts offered calls, pending ones included, not calls G1 refused', () => {
    const history = [step([['clock/now', {}, 'ok'], ['ghost/x', {}, 'unavailable']]), step([['pay/charge', {}]])];
    expect(decide({ maxToolCalls: 3 }, history, ['clock/now', {}])).toBeUndefined();
    expect(decide({ maxToolCalls: 2 }, history, ['clock/now', {}])).toEqual({ name: 'maxToolCalls', value: 2, tool: 'clock/now' });
    expect(decide({ maxToolCalls: 0 }, [], ['clock/now', {}])).toEqual({ name: 'maxToolCalls', value: 0, tool: 'clock/now' });
  });

  it('a perTool cap counts only what its pattern selects (globs, and mcp:<server> through the offer)', () => {
    const perTool = [
      { pattern: compileToolPattern('pay/*'), max: 1 },
      { pattern: compileToolPattern('mcp:kb'), max: 1 },
    ];
    const history = [step([['clock/now', {}, 'ok'], ['clock/now', {}, 'ok']])];
    expect(decide({ perTool }, history, ['pay/charge', {}])).toBeUndefined();
    expect(decide({ perTool }, [...history, step([['pay/charge', {}, 'ok']])], ['pay/charge', {}])).toEqual({ name: 'perTool', value: 1, tool: 'pay/charge', pattern: 'pay/*' });
    expect(decide({ perTool }, [step([['kb/search', { q: 1 }, 'ok']])], ['kb/search', { q: 2 }])).toMatchObject({ name: 'perTool', pattern: 'mcp:kb' });
  });

  it('steps, cost and tokens are checked before a model call: tokens are input + output', () => {
    const limits: AgentLimits = { maxSteps: 5, maxRepeatedFailures: 3, maxCostUsd: 1, maxTokens: 100 };
    expect(stepLimitReached(limits, { stepIndex: 1, usage: { inputTokens: 60, outputTokens: 39, costUsd: 0.5 } })).toBeUndefined();
    expect(stepLimitReached(limits, { stepIndex: 1, usage: { inputTokens: 60, outputTokens: 40, costUsd: 0.5 } })).toEqual({ name: 'maxTokens', value: 100 });
    expect(stepLimitReached(limits, { stepIndex: 5, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } })).toEqual({ name: 'maxSteps', value: 5 });
  });
});

describe('F5 loop guard over the committed conversation', () => {
  const failing = (args: Record<string, unknown>) => step([['pay/charge', args, 'failed']]);

  it('refuses the call after maxRepeatedFailures identical failures in a row (key order ignored)', () => {
    const history = [failing({ a: 1, b: 2 }), failing({ b: 2, a: 1 }), failing({ a: 1, b: 2 })];
    expect(decide({}, history, ['pay/charge', { b: 2, a: 1 }])).toEqual({ name: 'maxRepeatedFailures', value: 3, tool: 'pay/charge' });
    expect(decide({ maxRepeatedFailures: 4 }, history, ['pay/charge', { a: 1, b: 2 }])).toBeUndefined();
  });

  it('other arguments or other tools do not count, and a success of the identical call resets the run', () => {
    expect(decide({}, [failing({ a: 1 }), failing({ a: 1 }), failing({ a: 1 })], ['pay/charge', { a: 2 }])).toBeUndefined();
    // Failures of other calls in between do not break the identical call's run.
    expect(decide({}, [failing({ a: 1 }), failing({ a: 2 }), failing({ a: 1 }), step([['clock/now', {}, 'failed']]), failing({ a: 1 })], ['pay/charge', { a: 1 }])).toMatchObject({ name: 'maxRepeatedFailures' });
    expect(decide({}, [failing({ a: 1 }), failing({ a: 1 }), step([['pay/charge', { a: 1 }, 'ok']]), failing({ a: 1 })], ['pay/charge', { a: 1 }])).toBeUndefined();
  });
});

describe('F4 a reached limit as the terminal transition stores it', () => {
  it('round-trips, with an error type and summary for token_limit and tool_limit only', () => {
    const limit = { name: 'perTool' as const, value: 1, tool: 'pay/charge', pattern: 'pay/*' };
    const record = limitRecord(limit);
    expect(record).toMatchObject({ type: 'perTool', summary: limitSummary(limit) });
    expect(storedLimit({ reason: 'tool_limit', errorMessage: record.message })).toEqual(limit);
    expect(limitRecord({ name: 'maxSteps', value: 3 })).toEqual({ message: '{"name":"maxSteps","value":3}' });
    expect(storedLimit({ reason: 'error', errorMessage: record.message })).toBeUndefined();
    expect(storedLimit({ reason: 'tool_limit', errorMessage: 'not json' })).toBeUndefined();
  });

  it('a summary shows at most 200 characters of a pattern', () => {
    expect(limitSummary({ name: 'perTool', value: 1, tool: 'a/b', pattern: `x/${'p'.repeat(1000)}` }).length).toBeLessThan(300);
  });
});
