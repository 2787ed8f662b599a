/**
 * The hook-point table (SPEC A2, E2, K1; DESIGN §2 `hook-points.ts`): exactly 32 points, 19 agent + 13 engine,
 * each with a family, a kind and a payload type.
 */
import {
  AGENT_HOOK_POINTS,
  ENGINE_HOOK_POINTS,
  HOOK_POINT_NAMES,
  hookEventName,
  isHookPoint,
  type HookPoint,
} from '../../../src/index.js';
import { HOOK_POINTS, hookPointSpec } from '../../../src/hooks/hook-points.js';

const AGENT_POINTS = [
  'beforeStep',
  'afterStep',
  'onComplete',
  'onError',
  'beforeToolCall',
  'afterToolCall',
  'onToolCallError',
  'beforeHumanIntervention',
  'afterHumanIntervention',
  'onStopByHumanIntervention',
  'beforeCompact',
  'afterCompact',
  'onCompactError',
  'beforeCallAgent',
  'afterCallAgent',
  'onCallAgentError',
  'beforeModelCall',
  'afterModelCall',
  'onModelCallError',
] as const;

/** E2: point → payload context it receives. */
const ENGINE_PAYLOADS: Record<string, string> = {
  on_engine_start: 'EngineContext',
  on_engine_stop: 'EngineContext',
  on_run_start: 'RunContext',
  on_run_end: 'RunEndContext',
  on_run_error: 'Error',
  before_tool_call: 'ToolRequestContext',
  after_tool_call: 'ToolCallContext',
  transform_tool_result: 'ToolResultContext',
  on_tool_error: 'ToolCallContext',
  before_mcp_request: 'McpRequestContext',
  after_mcp_response: 'McpResponseContext',
  before_model_request: 'ModelRequestContext',
  after_model_response: 'ModelResponseContext',
};
const ENGINE_POINTS = Object.keys(ENGINE_PAYLOADS);

describe('hook points table', () => {
  it('A2/E2/K1: exactly 32 points, no duplicates', () => {
    expect(HOOK_POINT_NAMES).toHaveLength(32);
    expect(new Set(HOOK_POINT_NAMES).size).toBe(32);
    expect(Object.keys(HOOK_POINTS)).toHaveLength(32);
    expect([...HOOK_POINT_NAMES].sort()).toEqual([...AGENT_POINTS, ...ENGINE_POINTS].sort());
  });

  it('A2/K1: the 19 agent points are exactly the SPEC names, family agent', () => {
    expect(AGENT_HOOK_POINTS).toHaveLength(19);
    expect([...AGENT_HOOK_POINTS].sort()).toEqual([...AGENT_POINTS].sort());
    for (const point of AGENT_POINTS) expect(HOOK_POINTS[point].family).toBe('agent');
  });

  it('E2/K1: the 13 engine points are exactly the SPEC names, family engine', () => {
    expect(ENGINE_HOOK_POINTS).toHaveLength(13);
    expect([...ENGINE_HOOK_POINTS].sort()).toEqual([...ENGINE_POINTS].sort());
    for (const point of ENGINE_POINTS) expect(hookPointSpec(point as HookPoint).family).toBe('engine');
  });

  it('A2/E2: every point has a family, a kind and a non-empty payload type', () => {
    for (const point of HOOK_POINT_NAMES) {
      const spec = HOOK_POINTS[point];
      expect(['agent', 'engine']).toContain(spec.family);
      expect(['observe', 'control', 'transform', 'mock']).toContain(spec.kind);
      expect(typeof spec.payload).toBe('string');
      expect(spec.payload.length).toBeGreaterThan(0);
      expect(typeof spec.toolEvent).toBe('boolean');
    }
  });

  it('E2: engine payload types match the SPEC contexts', () => {
    for (const [point, payload] of Object.entries(ENGINE_PAYLOADS)) {
      expect({ point, payload: hookPointSpec(point as HookPoint).payload }).toEqual({ point, payload });
    }
  });

  it('A2/V: agent payload types are the <Name>Event types', () => {
    for (const point of AGENT_POINTS) {
      expect(HOOK_POINTS[point].payload).toBe(`${point[0]!.toUpperCase()}${point.slice(1)}Event`);
    }
  });

  it('E2/K1: the transform points are exactly on_run_start, before_mcp_request, transform_tool_result, before_model_request, after_model_response', () => {
    const transforms = HOOK_POINT_NAMES.filter((p) => HOOK_POINTS[p].kind === 'transform').sort();
    expect(transforms).toEqual(['after_model_response', 'before_mcp_request', 'before_model_request', 'on_run_start', 'transform_tool_result']);
  });

  it('E2: only transform_tool_result must return; on_run_start / before_mcp_request may return nothing', () => {
    expect(hookPointSpec('transform_tool_result').mustReturn).toBe(true);
    expect(hookPointSpec('on_run_start').mustReturn).toBe(false);
    expect(hookPointSpec('before_mcp_request').mustReturn).toBe(false);
    expect(hookPointSpec('before_model_request').mustReturn).toBe(false);
    expect(hookPointSpec('after_model_response').mustReturn).toBe(false);
  });

  it('E2: every other engine point is observe-only (cannot modify)', () => {
    for (const point of ENGINE_POINTS) {
      if (['on_run_start', 'before_mcp_request', 'transform_tool_result', 'before_model_request', 'after_model_response'].includes(point)) continue;
      expect({ point, kind: hookPointSpec(point as HookPoint).kind }).toEqual({ point, kind: 'observe' });
    }
  });

  it('W8/W9/M1/K1: beforeToolCall/beforeModelCall are mock (and control) points, afterToolCall/afterModelCall control points, other agent points observe', () => {
    expect(HOOK_POINTS.beforeToolCall.kind).toBe('mock');
    expect(HOOK_POINTS.afterToolCall.kind).toBe('control');
    expect(HOOK_POINTS.beforeModelCall.kind).toBe('mock');
    expect(HOOK_POINTS.afterModelCall.kind).toBe('control');
    for (const point of AGENT_POINTS) {
      if (['beforeToolCall', 'afterToolCall', 'beforeModelCall', 'afterModelCall'].includes(point)) continue;
      expect({ point, kind: HOOK_POINTS[point].kind }).toEqual({ point, kind: 'observe' });
    }
  });

  it('W5/E2: tool events (where matchers apply) are the three agent tool events and the four engine tool points', () => {
    const toolPoints = HOOK_POINT_NAMES.filter((p) => HOOK_POINTS[p].toolEvent).sort();
    expect(toolPoints).toEqual(
      ['afterToolCall', 'after_tool_call', 'beforeToolCall', 'before_tool_call', 'onToolCallError', 'on_tool_error', 'transform_tool_result'].sort(),
    );
  });

  it('E6/DESIGN §3: only on_engine_stop and on_run_error never propagate', () => {
    const never = HOOK_POINT_NAMES.filter((p) => hookPointSpec(p).neverPropagates === true).sort();
    expect(never).toEqual(['on_engine_stop', 'on_run_error']);
  });

  it('A2/E2/K1: isHookPoint accepts the 32 names only', () => {
    for (const point of HOOK_POINT_NAMES) expect(isHookPoint(point)).toBe(true);
    for (const bad of ['', 'BeforeStep', 'before_step', 'onRunStart', 'toString', 'constructor', '__proto__', 42, null, undefined, {}]) {
      expect(isHookPoint(bad)).toBe(false);
    }
  });

  it('DESIGN §10: the event-emitter name of a point is agent-hooks.<point>', () => {
    expect(hookEventName('after_tool_call')).toBe('agent-hooks.after_tool_call');
    expect(hookEventName('afterStep')).toBe('agent-hooks.afterStep');
  });

  it('A2/E2: the name lists are frozen', () => {
    expect(Object.isFrozen(HOOK_POINT_NAMES)).toBe(true);
    expect(Object.isFrozen(AGENT_HOOK_POINTS)).toBe(true);
    expect(Object.isFrozen(ENGINE_HOOK_POINTS)).toBe(true);
  });
});
