/**
 * Groups timeline rows by step for the waterfall. The timeline names no step, so the groups are found:
 * 1. `beforeStep` rows start a step (exact, when a beforeStep hook is configured);
 * 2. otherwise, when model-call hooks ran (SPEC K1), each step's model call starts its group: a model-call row
 *    after the step's tool or compaction rows begins the next step (a compaction's call and the answer's
 *    call of one step stay together);
 * 3. otherwise the rows of each tool call are found by the canonical per-call order (DESIGN §3) and
 *    matched to the tool messages, whose step is the assistant message before them — used only when the
 *    number of calls found equals the number of tool messages;
 * 4. otherwise one group, said to be unmarked.
 * Run-level rows (on_run_start before, terminal points after) get groups of their own.
 */
import type { MessageView, TimelineItem } from '../api/types.js';

export interface StepGroup {
  key: string;
  label: string;
  rows: TimelineItem[];
}

/** Position of a point within one tool call (DESIGN §3 "Per tool call"); absent: not a per-call point. */
const CALL_ORDER: Record<string, number> = {
  before_tool_call: 1,
  beforeToolCall: 2,
  beforeHumanIntervention: 2.5,
  afterHumanIntervention: 2.6,
  onStopByHumanIntervention: 2.7,
  before_mcp_request: 3,
  after_mcp_response: 3,
  beforeCallAgent: 3,
  afterCallAgent: 3,
  onCallAgentError: 3,
  on_tool_error: 4,
  onToolCallError: 4,
  transform_tool_result: 5,
  afterToolCall: 6,
  after_tool_call: 7,
};

/** The model call's points (SPEC K1): they open a step's work, before its tool calls. */
const MODEL_CALL = new Set(['before_model_request', 'beforeModelCall', 'onModelCallError', 'after_model_response', 'afterModelCall']);
const COMPACTION = new Set(['beforeCompact', 'afterCompact', 'onCompactError']);

const RUN_START = new Set(['on_engine_start', 'on_run_start']);
const RUN_END = new Set(['onError', 'onComplete', 'on_run_end', 'on_run_error', 'on_engine_stop']);

export function groupBySteps(rows: readonly TimelineItem[], messages: readonly MessageView[]): StepGroup[] {
  const start: TimelineItem[] = [];
  const end: TimelineItem[] = [];
  const middle: TimelineItem[] = [];
  for (const row of rows) {
    if (RUN_START.has(row.point) && middle.length === 0) start.push(row);
    else if (RUN_END.has(row.point)) end.push(row);
    else middle.push(row);
  }
  const steps = middle.some((row) => row.point === 'beforeStep')
    ? byStepMarkers(middle)
    : middle.some((row) => MODEL_CALL.has(row.point))
      ? byModelCalls(middle)
      : byToolCalls(middle, messages);
  const groups: StepGroup[] = [];
  if (start.length > 0) groups.push({ key: 'run-start', label: 'Run start', rows: start });
  groups.push(...steps);
  if (end.length > 0) groups.push({ key: 'run-end', label: 'Run end', rows: end });
  return groups;
}

function byStepMarkers(rows: readonly TimelineItem[]): StepGroup[] {
  const groups: StepGroup[] = [];
  let current: StepGroup | undefined;
  for (const row of rows) {
    if (row.point === 'beforeStep' || !current) {
      // Several beforeStep hooks of one step come one after another.
      const continues = current && row.point === 'beforeStep' && current.rows.every((r) => r.point === 'beforeStep') && !current.rows.some((r) => r.hookId === row.hookId);
      if (!continues) {
        current = { key: `step-${groups.length + 1}`, label: `Step ${groups.length + 1}`, rows: [] };
        groups.push(current);
      }
    }
    current!.rows.push(row);
  }
  return groups;
}

function byModelCalls(rows: readonly TimelineItem[]): StepGroup[] {
  const groups: StepGroup[] = [];
  let current: StepGroup | undefined;
  // Whether the current group has rows past its model call (tool calls, afterStep): a model row then starts a step.
  let pastModelCall = false;
  for (const row of rows) {
    // A step's work opens with its compaction (if any) and its model call.
    const opens = MODEL_CALL.has(row.point) || COMPACTION.has(row.point);
    if (!current || (opens && pastModelCall)) {
      current = { key: `step-${groups.length + 1}`, label: `Step ${groups.length + 1}`, rows: [] };
      groups.push(current);
      pastModelCall = false;
    }
    current.rows.push(row);
    if (!opens) pastModelCall = true;
  }
  return groups;
}

/** Splits rows into tool calls: a call ends when the order goes back, or a hook repeats at one point. */
function splitCalls(rows: readonly TimelineItem[]): TimelineItem[][] | undefined {
  const calls: TimelineItem[][] = [];
  let current: TimelineItem[] = [];
  let lastOrder = -1;
  for (const row of rows) {
    const order = CALL_ORDER[row.point];
    if (order === undefined) return undefined; // a row this rule cannot place
    const repeats = order === lastOrder && current.some((r) => r.point === row.point && r.hookId === row.hookId);
    if (current.length > 0 && (order < lastOrder || repeats)) {
      calls.push(current);
      current = [];
    }
    current.push(row);
    lastOrder = order;
  }
  if (current.length > 0) calls.push(current);
  return calls;
}

function byToolCalls(rows: readonly TimelineItem[], messages: readonly MessageView[]): StepGroup[] {
  if (rows.length === 0) return [];
  const stepOfTool: number[] = [];
  let step = 0;
  for (const message of messages) {
    if (message.role === 'assistant') step++;
    else if (message.role === 'tool') stepOfTool.push(step);
  }
  const calls = splitCalls(rows);
  if (!calls || calls.length !== stepOfTool.length) {
    return [{ key: 'unmarked', label: 'All hook invocations (steps not marked: no beforeStep hook)', rows: [...rows] }];
  }
  const groups: StepGroup[] = [];
  calls.forEach((call, index) => {
    const number = stepOfTool[index]!;
    const last = groups.at(-1);
    if (last && last.key === `step-${number}`) last.rows.push(...call);
    else groups.push({ key: `step-${number}`, label: `Step ${number}`, rows: [...call] });
  });
  return groups;
}
