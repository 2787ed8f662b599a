/**
 * SPEC F1: the outcome records of a tool call's hooks name the call, so its timeline rows can carry the key.
 * Two calls whose chains overlap never mix, another operation's records never take the call, and records
 * of points that are not tool points pass unchanged.
 */
import type { HookOutcomeRecord } from '../../../src/hooks/hook-outcome.js';
import type { HookPoint } from '../../../src/hooks/hook-points.js';
import { ToolCallScope } from '../../../src/runtime/tools/tool-call-scope.js';

function recorder() {
  const records: HookOutcomeRecord[] = [];
  return { records, sink: { record: (record: HookOutcomeRecord) => void records.push(record) } };
}

const outcome = (point: HookPoint, operationId: string): HookOutcomeRecord => ({ operationId, point, hookId: `h-${point}`, source: 'decorator', outcome: 'ok', latencyMs: 1 });
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('F1 tool-call scope of hook outcome records', () => {
  it('F1: records of tool points in a call name it; overlapping calls never mix; other points and operations pass unchanged', async () => {
    const scope = new ToolCallScope();
    const { records, sink } = recorder();
    const keyed = scope.sink(sink);
    const chain = (callId: string) =>
      scope.run('op-1', callId, async () => {
        keyed.record(outcome('beforeToolCall', 'op-1'));
        await tick();
        keyed.record(outcome('transform_tool_result', 'op-1'));
        keyed.record(outcome('beforeStep', 'op-1'));
        // A sub-agent started by the call: its own operation's rows are not the parent's call.
        keyed.record(outcome('beforeToolCall', 'op-child'));
        await tick();
        keyed.record(outcome('onToolCallError', 'op-1'));
      });
    await Promise.all([chain('call-a'), chain('call-b')]);
    keyed.record(outcome('afterToolCall', 'op-1'));

    const tagged = records.filter((record) => record.operationId === 'op-1' && record.point !== 'beforeStep' && record.toolCallId !== undefined);
    expect(tagged.filter((record) => record.toolCallId === 'call-a').map((record) => record.point)).toEqual(['beforeToolCall', 'transform_tool_result', 'onToolCallError']);
    expect(tagged.filter((record) => record.toolCallId === 'call-b').map((record) => record.point)).toEqual(['beforeToolCall', 'transform_tool_result', 'onToolCallError']);
    for (const record of records.filter((r) => r.point === 'beforeStep' || r.operationId === 'op-child')) expect(record).not.toHaveProperty('toolCallId');
    // Outside any call's chain nothing is added.
    expect(records.at(-1)).not.toHaveProperty('toolCallId');
  });

  it("F1: a record that already names its call (the runtime's own G1 verdict) keeps it; the sink's activity is the wrapped one's", () => {
    const scope = new ToolCallScope();
    const { records, sink } = recorder();
    scope.run('op-1', 'call-a', () => scope.sink(sink).record({ ...outcome('beforeToolCall', 'op-1'), toolCallId: 'call-g1' }));
    expect(records[0]!.toolCallId).toBe('call-g1');
    expect(scope.sink({ record: () => undefined, active: false }).active).toBe(false);
    expect(scope.sink({ record: () => undefined }).active).toBe(true);
  });
});
