/**
 * The 32 hook points of both families (SPEC A2, E2, K1) as one table the compiler checks: every point has a
 * family, a kind and a payload type, and the payload map below must name exactly the same points.
 */
import type {
  AfterCallAgentEvent,
  AfterCompactEvent,
  AfterHumanInterventionEvent,
  AfterStepEvent,
  AfterToolCallEvent,
  BeforeCallAgentEvent,
  BeforeCompactEvent,
  BeforeHumanInterventionEvent,
  BeforeStepEvent,
  BeforeToolCallEvent,
  OnCallAgentErrorEvent,
  OnCompactErrorEvent,
  OnCompleteEvent,
  OnErrorEvent,
  OnStopByHumanInterventionEvent,
  OnToolCallErrorEvent,
} from './agent-events.js';
import type {
  EngineContext,
  McpRequestContext,
  McpResponseContext,
  RunContext,
  RunEndContext,
  ToolCallContext,
  ToolRequestContext,
  ToolResultContext,
} from './contexts.js';
import type { AfterModelCallEvent, BeforeModelCallEvent, OnModelCallErrorEvent } from './model-call-events.js';
import type { ModelRequestContext, ModelResponseContext } from './model-contexts.js';

export type HookFamily = 'agent' | 'engine';

/**
 * - `observe`: handlers watch; nothing they return is used.
 * - `control`: may decide allow/deny (agent tool events, W8–W14).
 * - `transform`: may (or must) return a new payload that replaces the input (E2).
 * - `mock`: may supply the result instead of running the tool or the model (M1, K3); also a control.
 */
export type HookKind = 'observe' | 'control' | 'transform' | 'mock';

/** Payload each point's handlers receive (agent family: the event; engine family: via `HookInvocation`). */
export interface HookPayloads {
  beforeStep: BeforeStepEvent;
  afterStep: AfterStepEvent;
  onComplete: OnCompleteEvent;
  onError: OnErrorEvent;
  beforeToolCall: BeforeToolCallEvent;
  afterToolCall: AfterToolCallEvent;
  onToolCallError: OnToolCallErrorEvent;
  beforeHumanIntervention: BeforeHumanInterventionEvent;
  afterHumanIntervention: AfterHumanInterventionEvent;
  onStopByHumanIntervention: OnStopByHumanInterventionEvent;
  beforeCompact: BeforeCompactEvent;
  afterCompact: AfterCompactEvent;
  onCompactError: OnCompactErrorEvent;
  beforeCallAgent: BeforeCallAgentEvent;
  afterCallAgent: AfterCallAgentEvent;
  onCallAgentError: OnCallAgentErrorEvent;
  beforeModelCall: BeforeModelCallEvent;
  afterModelCall: AfterModelCallEvent;
  onModelCallError: OnModelCallErrorEvent;
  on_engine_start: EngineContext;
  on_engine_stop: EngineContext;
  on_run_start: RunContext;
  on_run_end: RunEndContext;
  on_run_error: Error;
  before_tool_call: ToolRequestContext;
  after_tool_call: ToolCallContext;
  transform_tool_result: ToolResultContext;
  on_tool_error: ToolCallContext;
  before_mcp_request: McpRequestContext;
  after_mcp_response: McpResponseContext;
  before_model_request: ModelRequestContext;
  after_model_response: ModelResponseContext;
}

export type HookPoint = keyof HookPayloads;

export interface HookPointSpec {
  readonly family: HookFamily;
  readonly kind: HookKind;
  /** Name of the payload type (the context class for the engine family). */
  readonly payload: string;
  /** A tool event: matchers apply (W5). */
  readonly toolEvent: boolean;
  /** Transform points only: the hook must return a payload (`transform_tool_result`) or may return nothing. */
  readonly mustReturn?: boolean;
  /** Hook failures here never propagate (`on_engine_stop`, `on_run_error`; DESIGN §3). */
  readonly neverPropagates?: boolean;
}

export const HOOK_POINTS = {
  beforeStep: { family: 'agent', kind: 'observe', payload: 'BeforeStepEvent', toolEvent: false },
  afterStep: { family: 'agent', kind: 'observe', payload: 'AfterStepEvent', toolEvent: false },
  onComplete: { family: 'agent', kind: 'observe', payload: 'OnCompleteEvent', toolEvent: false },
  onError: { family: 'agent', kind: 'observe', payload: 'OnErrorEvent', toolEvent: false },
  beforeToolCall: { family: 'agent', kind: 'mock', payload: 'BeforeToolCallEvent', toolEvent: true },
  afterToolCall: { family: 'agent', kind: 'control', payload: 'AfterToolCallEvent', toolEvent: true },
  onToolCallError: { family: 'agent', kind: 'observe', payload: 'OnToolCallErrorEvent', toolEvent: true },
  beforeHumanIntervention: { family: 'agent', kind: 'observe', payload: 'BeforeHumanInterventionEvent', toolEvent: false },
  afterHumanIntervention: { family: 'agent', kind: 'observe', payload: 'AfterHumanInterventionEvent', toolEvent: false },
  onStopByHumanIntervention: { family: 'agent', kind: 'observe', payload: 'OnStopByHumanInterventionEvent', toolEvent: false },
  beforeCompact: { family: 'agent', kind: 'observe', payload: 'BeforeCompactEvent', toolEvent: false },
  afterCompact: { family: 'agent', kind: 'observe', payload: 'AfterCompactEvent', toolEvent: false },
  onCompactError: { family: 'agent', kind: 'observe', payload: 'OnCompactErrorEvent', toolEvent: false },
  beforeCallAgent: { family: 'agent', kind: 'observe', payload: 'BeforeCallAgentEvent', toolEvent: false },
  afterCallAgent: { family: 'agent', kind: 'observe', payload: 'AfterCallAgentEvent', toolEvent: false },
  onCallAgentError: { family: 'agent', kind: 'observe', payload: 'OnCallAgentErrorEvent', toolEvent: false },
  beforeModelCall: { family: 'agent', kind: 'mock', payload: 'BeforeModelCallEvent', toolEvent: false },
  afterModelCall: { family: 'agent', kind: 'control', payload: 'AfterModelCallEvent', toolEvent: false },
  onModelCallError: { family: 'agent', kind: 'observe', payload: 'OnModelCallErrorEvent', toolEvent: false },
  on_engine_start: { family: 'engine', kind: 'observe', payload: 'EngineContext', toolEvent: false },
  on_engine_stop: { family: 'engine', kind: 'observe', payload: 'EngineContext', toolEvent: false, neverPropagates: true },
  on_run_start: { family: 'engine', kind: 'transform', payload: 'RunContext', toolEvent: false, mustReturn: false },
  on_run_end: { family: 'engine', kind: 'observe', payload: 'RunEndContext', toolEvent: false },
  on_run_error: { family: 'engine', kind: 'observe', payload: 'Error', toolEvent: false, neverPropagates: true },
  before_tool_call: { family: 'engine', kind: 'observe', payload: 'ToolRequestContext', toolEvent: true },
  after_tool_call: { family: 'engine', kind: 'observe', payload: 'ToolCallContext', toolEvent: true },
  transform_tool_result: { family: 'engine', kind: 'transform', payload: 'ToolResultContext', toolEvent: true, mustReturn: true },
  on_tool_error: { family: 'engine', kind: 'observe', payload: 'ToolCallContext', toolEvent: true },
  before_mcp_request: { family: 'engine', kind: 'transform', payload: 'McpRequestContext', toolEvent: false, mustReturn: false },
  after_mcp_response: { family: 'engine', kind: 'observe', payload: 'McpResponseContext', toolEvent: false },
  before_model_request: { family: 'engine', kind: 'transform', payload: 'ModelRequestContext', toolEvent: false, mustReturn: false },
  after_model_response: { family: 'engine', kind: 'transform', payload: 'ModelResponseContext', toolEvent: false, mustReturn: false },
} as const satisfies { readonly [P in HookPoint]: HookPointSpec };

export type AgentHookPoint = { [P in HookPoint]: (typeof HOOK_POINTS)[P]['family'] extends 'agent' ? P : never }[HookPoint];
export type EngineHookPoint = Exclude<HookPoint, AgentHookPoint>;
export type TransformHookPoint = { [P in HookPoint]: (typeof HOOK_POINTS)[P]['kind'] extends 'transform' ? P : never }[HookPoint];
export type ToolControlPoint = 'beforeToolCall' | 'afterToolCall';
/** The model call's controls (K1, K3): decided like the tool points, same decisions and failure handling. */
export type ModelControlPoint = 'beforeModelCall' | 'afterModelCall';
/** Every point whose hooks may decide allow/deny and take `onError` / `responseHandling: 'toolCall'`. */
export type ControlPoint = ToolControlPoint | ModelControlPoint;
export const CONTROL_POINTS: ReadonlySet<HookPoint> = new Set<HookPoint>(['beforeToolCall', 'afterToolCall', 'beforeModelCall', 'afterModelCall']);

export function isControlPoint(point: string): point is ControlPoint {
  return CONTROL_POINTS.has(point as HookPoint);
}

export const HOOK_POINT_NAMES: readonly HookPoint[] = Object.freeze(Object.keys(HOOK_POINTS) as HookPoint[]);
export const AGENT_HOOK_POINTS: readonly AgentHookPoint[] = Object.freeze(
  HOOK_POINT_NAMES.filter((p): p is AgentHookPoint => HOOK_POINTS[p].family === 'agent'),
);
export const ENGINE_HOOK_POINTS: readonly EngineHookPoint[] = Object.freeze(
  HOOK_POINT_NAMES.filter((p): p is EngineHookPoint => HOOK_POINTS[p].family === 'engine'),
);

export function isHookPoint(value: unknown): value is HookPoint {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(HOOK_POINTS, value);
}

export function hookPointSpec(point: HookPoint): HookPointSpec {
  return HOOK_POINTS[point];
}

/** The event name the `@nestjs/event-emitter` bridge uses for a point. */
export function hookEventName(point: HookPoint): string {
  return `agent-hooks.${point}`;
}
