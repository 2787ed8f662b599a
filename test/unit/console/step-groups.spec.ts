/**
 * Issue 17 item 4: the waterfall groups hook rows by step. The timeline names no step, so the console
 * finds them — from beforeStep rows when there are some, else by matching each tool call's rows (found by
 * the per-call order of DESIGN §3) to the tool messages — and says so when it cannot.
 */
import { groupBySteps } from '../../../console/src/operation/step-groups.js';
import type { MessageView, TimelineItem } from '../../../console/src/api/types.js';

let seq = 0;
const row = (point: string, hookId = `h.${point}`): TimelineItem => ({ seq: ++seq, at: '2026-12-01T12:00:00.000Z', point, hookId, source: 'config', outcome: 'ok', latencyMs: 1 });
const message = (role: MessageView['role']): MessageView => ({ id: String(++seq), role, content: '' });
const shape = (groups: ReturnType<typeof groupBySteps>) => groups.map((g) => [g.label, g.rows.map((r) => r.point)]);

describe('issue 17 item 4: waterfall rows grouped by step', () => {
  it('beforeStep rows start the steps; run start and run end get groups of their own', () => {
    const rows = [row('on_run_start'), row('beforeStep'), row('beforeToolCall'), row('afterStep'), row('beforeStep'), row('afterStep'), row('onComplete'), row('on_run_end')];
    expect(shape(groupBySteps(rows, []))).toEqual([
      ['Run start', ['on_run_start']],
      ['Step 1', ['beforeStep', 'beforeToolCall', 'afterStep']],
      ['Step 2', ['beforeStep', 'afterStep']],
      ['Run end', ['onComplete', 'on_run_end']],
    ]);
  });

  it('without beforeStep rows, tool calls are found by their order and a repeated hook, and put in their messages\' steps', () => {
    // Step 1 calls two tools, step 2 one; the policy hook repeats at the same point for the second call.
    const messages = [message('user'), message('assistant'), message('tool'), message('tool'), message('assistant'), message('tool'), message('assistant')];
    const rows = [row('beforeToolCall', 'policy'), row('after_tool_call'), row('beforeToolCall', 'policy'), row('beforeToolCall', 'policy'), row('after_tool_call')];
    expect(shape(groupBySteps(rows, messages))).toEqual([
      ['Step 1', ['beforeToolCall', 'after_tool_call', 'beforeToolCall']],
      ['Step 2', ['beforeToolCall', 'after_tool_call']],
    ]);
  });

  it('when the calls found do not match the tool messages, one group says the steps are not marked', () => {
    const groups = groupBySteps([row('beforeToolCall'), row('after_tool_call')], [message('user'), message('assistant')]);
    expect(groups).toHaveLength(1);
    expect(groups[0]!.label).toMatch(/steps not marked/);
    expect(groups[0]!.rows).toHaveLength(2);
  });

  it('K1: without beforeStep rows, each step opens with its model call (a compaction and its summary call stay in the step)', () => {
    const rows = [
      row('before_model_request'),
      row('beforeModelCall'),
      row('afterModelCall'),
      row('beforeToolCall'),
      row('beforeCompact'),
      row('beforeModelCall'),
      row('afterCompact'),
      row('beforeModelCall'),
      row('afterModelCall'),
      row('onComplete'),
    ];
    expect(shape(groupBySteps(rows, []))).toEqual([
      ['Step 1', ['before_model_request', 'beforeModelCall', 'afterModelCall', 'beforeToolCall']],
      ['Step 2', ['beforeCompact', 'beforeModelCall', 'afterCompact', 'beforeModelCall', 'afterModelCall']],
      ['Run end', ['onComplete']],
    ]);
  });
});
