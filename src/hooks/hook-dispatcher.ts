/**
 * The service every other room calls to fire hooks: dispatch. It finds a point's hooks in source order
 * (app → caller → environment, L3), announces the event to observers, and runs them: observe points and
 * transform chains here, with each hook run by the `HookInvoker` (hook-invoker.ts); the gates of a tool or
 * model call by the `CallGate` (call-gate.ts); every invocation's record by the `OutcomeRecorder`
 * (outcome-recorder.ts). DESIGN §3 is the order all of them keep.
 *
 * The hot path is plain async code, not a per-dispatch RxJS chain: a point without hooks returns after
 * three map lookups (E3), and observers get the same events through the Observable surface.
 */
import { Inject, Injectable, Optional } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { Observable, Subject } from 'rxjs';
import type { AfterToolCallEvent, BeforeToolCallObservationEvent, MockOutcome } from './agent-events.js';
import { CallGate, type MockPoint, type ResultPoint } from './call-gate.js';
import { hasBrand } from './context-brand.js';
import { NO_OPTIONS, type DispatchOptions } from './dispatch-options.js';
import { acceptToolMock, InvalidReturnError, isControl, toolNameOf } from './dispatch-support.js';
import { CriticalHookDeliveryError, errorCode, type CriticalDeliveryFailure } from './hook-errors.js';
import { HookInvoker } from './hook-invoker.js';
import type { HookOutcome, HookOutcomeRecord } from './hook-outcome.js';
import type { DispatchedEvent, HookErrorEvent } from './hook-pipeline.js';
import { hookEventName, HOOK_POINT_NAMES, HOOK_POINTS, hookPointSpec, type HookPayloads, type HookPoint, type TransformHookPoint } from './hook-points.js';
import { ENVIRONMENT_HOOK_SOURCE, type EnvironmentHooks, type EnvironmentHookSource } from './hook-ports.js';
import { HookRegistry } from './hook-registry.js';
import type { AfterModelCallEvent, BeforeModelCallObservationEvent } from './model-call-events.js';
import { acceptModelMock, type ModelCallGate } from './model-call-gate.js';
import { OutcomeRecorder } from './outcome-recorder.js';
import type { RegisteredHook } from './registered-hook.js';
import { ALLOWED, type ToolCallGate, type ToolVerdict } from './tool-verdict.js';
import { transformSuccessor } from './transform-successor.js';

export type { DispatchOptions } from './dispatch-options.js';

const NONE: readonly RegisteredHook[] = Object.freeze([]);
const NO_ENVIRONMENT: EnvironmentHooks = Object.freeze({ hooksFor: () => NONE });
const RESOLVED: Promise<void> = Promise.resolve();
/** `agent-hooks.<point>` names, built once. */
const EVENT_NAMES = new Map<HookPoint, string>(HOOK_POINT_NAMES.map((point) => [point, hookEventName(point)]));

@Injectable()
export class HookDispatcher extends Observable<DispatchedEvent> {
  private readonly events = new Subject<DispatchedEvent>();

  /** Every outcome record, as it happens. */
  readonly outcomes$: Observable<HookOutcomeRecord>;
  /** Hook failures that were handled by policy instead of thrown (the unhandled-exception bus). */
  readonly errors$: Observable<HookErrorEvent>;

  constructor(
    private readonly registry: HookRegistry,
    private readonly invoker: HookInvoker,
    private readonly gates: CallGate,
    private readonly recorder: OutcomeRecorder,
    @Optional() @Inject(ENVIRONMENT_HOOK_SOURCE) private readonly environment?: EnvironmentHookSource,
    @Optional() private readonly emitter?: EventEmitter2,
  ) {
    super((subscriber) => this.events.subscribe(subscriber));
    this.outcomes$ = recorder.outcomes$;
    this.errors$ = invoker.errors$;
  }

  /** Whether `point` has any hook for this operation (app, caller or environment). */
  hasHooks(point: HookPoint, operationId?: string): boolean {
    return (
      this.registry.appHooks(point).length > 0 ||
      this.registry.callerHooks(operationId, point).length > 0 ||
      (this.environment?.hooksFor(point).length ?? 0) > 0
    );
  }

  /** Whether a hook of any family applies to `point` for the operation (subscribers and listeners aside). */
  appliesHooks(point: HookPoint, options: DispatchOptions = NO_OPTIONS): boolean {
    return this.hooksFor(point, options.operationId, options) !== NONE;
  }

  /**
   * Whether a dispatch of `point` would reach anyone: a hook of any family for the operation (with the
   * step's environment snapshot), a subscriber of `events$` or an event-emitter listener.
   */
  isObserved(point: HookPoint, options: DispatchOptions = NO_OPTIONS): boolean {
    if (this.hooksFor(point, options.operationId, options) !== NONE || this.events.observed) return true;
    return this.emitter !== undefined && this.emitter.hasListeners(EVENT_NAMES.get(point)!) === true;
  }

  /**
   * The current environment's hooks, read once (L1): pass it as `DispatchOptions.environment` to every
   * dispatch of one step. A `process.env` read costs more than a whole dispatch without hooks.
   */
  environmentSnapshot(): EnvironmentHooks {
    const source = this.environment;
    if (!source) return NO_ENVIRONMENT;
    return source.snapshot ? source.snapshot() : source;
  }

  /**
   * Fires an observe point (and, at `beforeToolCall` / `afterToolCall`, the observe-only view: handlers and
   * notification webhooks, no controls asked). Engine-family `fail` failures reject with `HookFailedError`;
   * `fallback: 'none'` delivery failures reject with one `CriticalHookDeliveryError` after all hooks ran.
   */
  dispatch<P extends HookPoint>(point: P, payload: HookPayloads[P], options: DispatchOptions = NO_OPTIONS): Promise<void> {
    const operationId = this.operationIdOf(payload, options);
    const hooks = this.hooksFor(point, operationId, options);
    this.announce(point, payload, operationId);
    // E3: nothing registered → one shared, already-resolved promise; no closure, no async frame.
    if (hooks === NONE) return RESOLVED;
    return this.observeAll(point, hooks, payload, operationId, options);
  }

  /**
   * Runs the observers in order. Synchronous handlers run back to back without an async frame or a
   * microtask each (most of a one-handler dispatch's cost otherwise); from the first hook that must be
   * awaited — an async handler, a timeout, a webhook — the rest go on in `observeRest`, still in order.
   */
  private observeAll(point: HookPoint, hooks: readonly RegisteredHook[], payload: unknown, operationId: string | undefined, options: DispatchOptions): Promise<void> {
    const toolName = this.observeToolName(point, payload);
    try {
      for (let index = 0; index < hooks.length; index++) {
        const hook = hooks[index]!;
        if (!this.observes(point, hook, toolName)) continue;
        if (!hook.handler) return this.observeRest(point, hooks, index, undefined, payload, operationId, options);
        const pending = this.invoker.observeHandler(point, hook, payload, operationId, options);
        if (pending) return this.observeRest(point, hooks, index + 1, pending, payload, operationId, options);
      }
    } catch (error) {
      // An engine hook's `fail` policy: the same rejected promise an async dispatch gives.
      return Promise.reject(error);
    }
    return RESOLVED;
  }

  /** `observeAll` from hook `from` on, once `pending` (the handler before it) has settled. */
  private async observeRest(
    point: HookPoint,
    hooks: readonly RegisteredHook[],
    from: number,
    pending: Promise<void> | undefined,
    payload: unknown,
    operationId: string | undefined,
    options: DispatchOptions,
  ): Promise<void> {
    if (pending) await pending;
    const critical: CriticalDeliveryFailure[] = [];
    const toolName = this.observeToolName(point, payload);
    for (let index = from; index < hooks.length; index++) {
      const hook = hooks[index]!;
      if (!this.observes(point, hook, toolName)) continue;
      if (!hook.handler) {
        await this.invoker.notify(point, hook, payload, operationId, options, critical);
        continue;
      }
      const settling = this.invoker.observeHandler(point, hook, payload, operationId, options);
      if (settling) await settling;
    }
    if (critical.length > 0) throw new CriticalHookDeliveryError(critical);
  }

  private observeToolName(point: HookPoint, payload: unknown): string | undefined {
    return HOOK_POINTS[point].toolEvent ? toolNameOf(payload) : undefined;
  }

  /** Whether `hook` observes this event. */
  private observes(point: HookPoint, hook: RegisteredHook, toolName: string | undefined): boolean {
    // W5: an event without a string identifier and apiName matches no hook that has a matcher.
    if (hook.matcher && (toolName === undefined || !hook.matcher.test(toolName))) return false;
    // The observe-only view of a gate point asks no controls (DESIGN §3: a call denied before it ran).
    return !((point === 'beforeToolCall' || point === 'afterToolCall') && isControl(hook));
  }

  /**
   * Runs a transform chain (E2): each hook's output feeds the next. `transform_tool_result` hooks must return
   * a `ToolResultContext`; `on_run_start` and `before_mcp_request` hooks may return nothing (keep the input).
   * Anything else is a hook failure under the hook's `failure_policy`.
   */
  async transform<P extends TransformHookPoint>(point: P, payload: HookPayloads[P], options: DispatchOptions = NO_OPTIONS): Promise<HookPayloads[P]> {
    const operationId = this.operationIdOf(payload, options);
    const hooks = this.hooksFor(point, operationId, options);
    this.announce(point, payload, operationId);
    if (hooks === NONE) return payload;
    const spec = hookPointSpec(point);
    let current = payload;
    for (const hook of hooks) {
      if (hook.matcher) {
        const toolName = toolNameOf(current);
        if (toolName === undefined || !hook.matcher.test(toolName)) continue;
      }
      const started = this.recorder.clock();
      try {
        const returned = await this.invoker.callHandler(hook, this.invoker.invocation(point, hook, current, options));
        if (returned === undefined || returned === null) {
          if (spec.mustReturn) throw new InvalidReturnError(`must return a ${spec.payload}, returned ${String(returned)}`);
        } else if (!hasBrand(returned, spec.payload)) {
          throw new InvalidReturnError(`must return a ${spec.payload}`);
        } else {
          current = transformSuccessor(point, current, returned as HookPayloads[P]);
        }
        this.recorder.record(point, hook, operationId, 'ok', started);
      } catch (error) {
        this.recorder.record(point, hook, operationId, 'error', started, errorCode(error, 'handler_error'));
        this.invoker.engineFailure(point, hook, operationId, error, error instanceof InvalidReturnError ? error.message : undefined);
      }
    }
    return current;
  }

  /**
   * M1/M2: offers `mock()` to in-memory `beforeToolCall` handlers in order; the first accepted mock wins and
   * the remaining mock handlers are skipped. Sends no webhooks and asks no controls.
   */
  async dispatchBeforeToolCall(event: BeforeToolCallObservationEvent, options: DispatchOptions = NO_OPTIONS): Promise<MockOutcome | null> {
    const operationId = this.operationIdOf(event, options);
    const hooks = this.hooksFor('beforeToolCall', operationId, options);
    if (hooks === NONE) return null;
    return this.gates.mockOnly('beforeToolCall', hooks, event, operationId, acceptToolMock);
  }

  /**
   * The whole `beforeToolCall` step of DESIGN §3: in-memory handlers first (mock short-circuit, M1), then
   * controls in order (webhooks with `responseHandling: 'toolCall'`, handlers returning a decision, W14).
   * A deny or a blocking control error stops the call; a mocked call is still subject to the controls.
   */
  gateToolCall(event: BeforeToolCallObservationEvent, options: DispatchOptions = NO_OPTIONS): Promise<ToolCallGate> {
    return this.gate('beforeToolCall', event, options, acceptToolMock);
  }

  /** K1, K3: the `beforeModelCall` step, as `gateToolCall` is for a tool (mock phase, then controls in order). */
  gateModelCall(event: BeforeModelCallObservationEvent, options: DispatchOptions = NO_OPTIONS): Promise<ModelCallGate> {
    return this.gate('beforeModelCall', event, options, acceptModelMock);
  }

  /** K3: `afterModelCall` controls judge the answer in order; a deny replaces it for later hooks, as W9 does. */
  gateModelResponse(event: AfterModelCallEvent, options: DispatchOptions = NO_OPTIONS): Promise<ToolVerdict> {
    return this.gateResult('afterModelCall', event, options);
  }

  private async gate<M>(point: MockPoint, event: object, options: DispatchOptions, accept: (offered: unknown) => M | null): Promise<{ mock: M | null; verdict: ToolVerdict }> {
    const operationId = this.operationIdOf(event, options);
    const hooks = this.hooksFor(point, operationId, options);
    this.announce(point, event, operationId);
    if (hooks === NONE) return { mock: null, verdict: ALLOWED };
    return this.gates.before(point, hooks, event, operationId, options, accept);
  }

  /**
   * The `afterToolCall` step: handlers observe, controls inspect the (transformed) result in order; a deny
   * or blocking control error replaces it (W9). Later hooks then observe the sanitized result, never the
   * denied one.
   */
  gateToolResult(event: AfterToolCallEvent, options: DispatchOptions = NO_OPTIONS): Promise<ToolVerdict> {
    return this.gateResult('afterToolCall', event, options);
  }

  private async gateResult(point: ResultPoint, event: object, options: DispatchOptions): Promise<ToolVerdict> {
    const operationId = this.operationIdOf(event, options);
    const hooks = this.hooksFor(point, operationId, options);
    this.announce(point, event, operationId);
    if (hooks === NONE) return ALLOWED;
    return this.gates.after(point, hooks, event, operationId, options);
  }

  // ---------------------------------------------------------------------------------------------------------

  private hooksFor(point: HookPoint, operationId: string | undefined, options: DispatchOptions): readonly RegisteredHook[] {
    const app = this.registry.appHooks(point);
    const caller = this.registry.callerHooks(operationId, point);
    const env = (options.environment ?? this.environment ?? NO_ENVIRONMENT).hooksFor(point);
    if (app.length + caller.length + env.length === 0) return NONE;
    if (caller.length === 0 && env.length === 0) return app;
    return [...app, ...caller, ...env];
  }

  /**
   * A verdict of the runtime's own (no hook decided it), so the timeline shows it next to the hooks: a
   * call to a tool the agent was not offered (G1) is a `denied` row with its code.
   */
  recordRuntimeVerdict(point: HookPoint, operationId: string, hookId: string, outcome: HookOutcome, code: string, toolCallId?: string): void {
    this.recorder.recordRuntimeVerdict(point, operationId, hookId, outcome, code, toolCallId);
  }

  /** Observers: the Observable surface and the `@nestjs/event-emitter` bridge (observe-only). */
  private announce(point: HookPoint, payload: unknown, operationId: string | undefined): void {
    if (this.events.observed) {
      this.events.next({ point, payload, ...(operationId !== undefined ? { operationId } : {}) } as DispatchedEvent);
    }
    if (this.emitter) {
      const name = EVENT_NAMES.get(point)!;
      if (this.emitter.hasListeners(name)) this.emitter.emit(name, payload);
    }
  }

  private operationIdOf(payload: unknown, options: DispatchOptions): string | undefined {
    if (options.operationId !== undefined) return options.operationId;
    const p = payload as { operationId?: unknown; runId?: unknown } | null;
    if (p && typeof p === 'object') {
      if (typeof p.operationId === 'string') return p.operationId;
      if (typeof p.runId === 'string') return p.runId;
    }
    return options.runContext?.runId;
  }
}
