/**
 * The service every other room calls to fire hooks. It enforces, per point: source order (app → caller →
 * environment), matchers, mock short-circuit, decisions, transform chains, timeouts and the failure
 * handling of each family (DESIGN §3), and yields one outcome record per hook invocation.
 *
 * The hot path is plain async code, not a per-dispatch RxJS chain: a point without hooks returns after
 * three map lookups (E3), and observers get the same events through the Observable surface.
 */
import { Inject, Injectable, Logger, Optional, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { Observable, Subject } from 'rxjs';
import type { AfterToolCallEvent, BeforeToolCallObservationEvent, MockOutcome } from './agent-events.js';
import { hasBrand } from './context-brand.js';
import { RunContext } from './contexts.js';
import { readDecision, type DecisionReading } from './decision.js';
import { acceptToolMock, blocked, DeliveryUnavailableError, InvalidReturnError, isThenable, outcomeOf, withInertMock } from './dispatch-support.js';
import { CriticalHookDeliveryError, errorCode, errorType, HookFailedError, type CriticalDeliveryFailure } from './hook-errors.js';
import { HookInvocation } from './hook-invocation.js';
import type { HookOutcome, HookOutcomeRecord } from './hook-outcome.js';
import type { DispatchedEvent, HookErrorEvent } from './hook-pipeline.js';
import { hookEventName, HOOK_POINT_NAMES, HOOK_POINTS, hookPointSpec, type ControlPoint, type HookPayloads, type HookPoint, type TransformHookPoint } from './hook-points.js';
import {
  ENVIRONMENT_HOOK_SOURCE,
  HOOK_OUTCOME_SINK,
  WEBHOOK_DELIVERY,
  type EnvironmentHooks,
  type EnvironmentHookSource,
  type HookOutcomeSink,
  type WebhookDeliveryPort,
} from './hook-ports.js';
import { HookRegistry } from './hook-registry.js';
import { withTimeout } from './hook-timeout.js';
import type { AfterModelCallEvent, BeforeModelCallObservationEvent } from './model-call-events.js';
import { acceptModelMock, deniedModelView, type ModelCallGate } from './model-call-gate.js';
import type { RegisteredHook } from './registered-hook.js';
import { ALLOWED, deniedToolResult, type ToolCallGate, type ToolVerdict } from './tool-verdict.js';
import { transformSuccessor } from './transform-successor.js';

export interface DispatchOptions {
  /** Whose caller hooks apply; agent-family events default to `payload.operationId`, engine ones to `runContext.runId`. */
  operationId?: string;
  /** Per-request identity for engine-family `HookInvocation.runContext`. */
  runContext?: RunContext;
  /** Cancels webhook deliveries; a cancelled control never grants permission (W12). */
  signal?: AbortSignal;
  /** `HookInvocation.metadata` (the engine's metadata). */
  metadata?: Readonly<Record<string, unknown>>;
  /**
   * The environment hooks as read at the start of the step (`environmentSnapshot()`, L1: each step and
   * each resume takes a fresh one). Without it, each dispatch reads the current environment.
   */
  environment?: EnvironmentHooks;
}

type Reading = DecisionReading | { kind: 'error'; error: unknown };

const NONE: readonly RegisteredHook[] = Object.freeze([]);
const NO_ENVIRONMENT: EnvironmentHooks = Object.freeze({ hooksFor: () => NONE });
const NO_METADATA: Readonly<Record<string, unknown>> = Object.freeze({});
const NO_OPTIONS: DispatchOptions = Object.freeze({});
const RESOLVED: Promise<void> = Promise.resolve();
/** `agent-hooks.<point>` names, built once. */
const EVENT_NAMES = new Map<HookPoint, string>(HOOK_POINT_NAMES.map((point) => [point, hookEventName(point)]));
type MockPoint = 'beforeToolCall' | 'beforeModelCall';

@Injectable()
export class HookDispatcher extends Observable<DispatchedEvent> implements OnModuleInit {
  private readonly logger = new Logger('AgentHooks');
  private readonly events = new Subject<DispatchedEvent>();
  private readonly outcomeSubject = new Subject<HookOutcomeRecord>();
  private readonly errorSubject = new Subject<HookErrorEvent>();

  /** Every outcome record, as it happens. */
  readonly outcomes$: Observable<HookOutcomeRecord> = this.outcomeSubject.asObservable();
  /** Hook failures that were handled by policy instead of thrown (the unhandled-exception bus). */
  readonly errors$: Observable<HookErrorEvent> = this.errorSubject.asObservable();

  constructor(
    private readonly registry: HookRegistry,
    @Optional() @Inject(WEBHOOK_DELIVERY) private readonly delivery?: WebhookDeliveryPort,
    @Optional() @Inject(ENVIRONMENT_HOOK_SOURCE) private readonly environment?: EnvironmentHookSource,
    @Optional() @Inject(HOOK_OUTCOME_SINK) private sink?: HookOutcomeSink,
    @Optional() private readonly emitter?: EventEmitter2,
    @Optional() private readonly moduleRef?: ModuleRef,
  ) {
    super((subscriber) => this.events.subscribe(subscriber));
  }

  /** A host app may provide the outcome sink in any of its modules, not only in this one's scope. */
  onModuleInit(): void {
    if (this.sink || !this.moduleRef) return;
    try {
      this.sink = this.moduleRef.get<HookOutcomeSink>(HOOK_OUTCOME_SINK, { strict: false });
    } catch {
      // none provided: outcomes are only streamed on `outcomes$`
    }
  }

  /** Whether `point` has any hook for this operation (app, caller or environment). */
  hasHooks(point: HookPoint, operationId?: string): boolean {
    return (
      this.registry.appHooks(point).length > 0 ||
      this.registry.callerHooks(operationId, point).length > 0 ||
      (this.environment?.hooksFor(point).length ?? 0) > 0
    );
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
        const pending = this.observeHandler(point, hook, payload, operationId, options);
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
        await this.notify(point, hook, payload, operationId, options, critical);
        continue;
      }
      const settling = this.observeHandler(point, hook, payload, operationId, options);
      if (settling) await settling;
    }
    if (critical.length > 0) throw new CriticalHookDeliveryError(critical);
  }

  private observeToolName(point: HookPoint, payload: unknown): string | undefined {
    return HOOK_POINTS[point].toolEvent ? this.toolNameOf(payload) : undefined;
  }

  /** Whether `hook` observes this event. */
  private observes(point: HookPoint, hook: RegisteredHook, toolName: string | undefined): boolean {
    // W5: an event without a string identifier and apiName matches no hook that has a matcher.
    if (hook.matcher && (toolName === undefined || !hook.matcher.test(toolName))) return false;
    // The observe-only view of a gate point asks no controls (DESIGN §3: a call denied before it ran).
    return !((point === 'beforeToolCall' || point === 'afterToolCall') && this.isControl(hook));
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
        const toolName = this.toolNameOf(current);
        if (toolName === undefined || !hook.matcher.test(toolName)) continue;
      }
      const started = this.clock();
      try {
        const returned = await this.callHandler(hook, this.invocation(point, hook, current, options));
        if (returned === undefined || returned === null) {
          if (spec.mustReturn) throw new InvalidReturnError(`must return a ${spec.payload}, returned ${String(returned)}`);
        } else if (!hasBrand(returned, spec.payload)) {
          throw new InvalidReturnError(`must return a ${spec.payload}`);
        } else {
          current = transformSuccessor(point, current, returned as HookPayloads[P]);
        }
        this.record(point, hook, operationId, 'ok', started);
      } catch (error) {
        this.record(point, hook, operationId, 'error', started, errorCode(error, 'handler_error'));
        this.engineFailure(point, hook, operationId, error, error instanceof InvalidReturnError ? error.message : undefined);
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
    const { mock } = await this.mockPhase('beforeToolCall', this.matching(hooks, event), event, operationId, acceptToolMock);
    return mock;
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
    const matching = this.matching(hooks, event);
    const { mock, readings } = await this.mockPhase(point, matching, event, operationId, accept);
    const critical: CriticalDeliveryFailure[] = [];
    const verdict = await this.controlPhase(point, matching, event, operationId, options, readings, critical);
    if (critical.length > 0) throw new CriticalHookDeliveryError(critical);
    return { mock, verdict };
  }

  /**
   * The `afterToolCall` step: handlers observe, controls inspect the (transformed) result in order; a deny
   * or blocking control error replaces it (W9). Later hooks then observe the sanitized result, never the
   * denied one.
   */
  gateToolResult(event: AfterToolCallEvent, options: DispatchOptions = NO_OPTIONS): Promise<ToolVerdict> {
    return this.gateResult('afterToolCall', event, options);
  }

  private async gateResult(point: 'afterToolCall' | 'afterModelCall', event: object, options: DispatchOptions): Promise<ToolVerdict> {
    const operationId = this.operationIdOf(event, options);
    const hooks = this.hooksFor(point, operationId, options);
    this.announce(point, event, operationId);
    if (hooks === NONE) return ALLOWED;
    const critical: CriticalDeliveryFailure[] = [];
    const verdict = await this.controlPhase(point, this.matching(hooks, event), event, operationId, options, undefined, critical);
    if (critical.length > 0) throw new CriticalHookDeliveryError(critical);
    return verdict;
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

  /** W5: without a string identifier and apiName (no `"undefined/…"`), only hooks without a matcher apply. */
  private matching(hooks: readonly RegisteredHook[], event: unknown): RegisteredHook[] {
    const toolName = this.toolNameOf(event);
    return hooks.filter((hook) => !hook.matcher || (toolName !== undefined && hook.matcher.test(toolName)));
  }

  /** A hook that takes part in result control (asked for a decision). */
  private isControl(hook: RegisteredHook): boolean {
    return hook.handler ? hook.control : hook.webhook?.responseHandling === 'toolCall';
  }

  private async mockPhase<M>(
    point: MockPoint,
    hooks: readonly RegisteredHook[],
    event: object,
    operationId: string | undefined,
    accept: (offered: unknown) => M | null,
  ): Promise<{ mock: M | null; readings: Map<RegisteredHook, Reading> }> {
    const readings = new Map<RegisteredHook, Reading>();
    let mock: M | null = null;
    for (const hook of hooks) {
      if (!hook.handler || hook.control) continue;
      if (mock) continue; // M1: the first accepted mock short-circuits the remaining mock handlers
      let open = true;
      let mockedHere = false;
      const handlerEvent = {
        ...event,
        mock: (offered: unknown) => {
          const accepted = open && !mock ? accept(offered) : null;
          if (accepted === null) return false;
          mock = accepted;
          mockedHere = true;
          return true;
        },
      };
      const started = this.clock();
      try {
        const returned = await this.callHandler(hook, handlerEvent);
        const reading = readDecision(returned, point);
        readings.set(hook, reading);
        this.record(point, hook, operationId, mockedHere ? 'mocked' : outcomeOf(reading), started, reading.kind === 'invalid' ? 'invalid_response' : undefined);
      } catch (error) {
        readings.set(hook, { kind: 'error', error });
        this.record(point, hook, operationId, 'error', started, errorCode(error, 'handler_error'));
        this.reportError(point, hook, operationId, error);
      } finally {
        open = false;
      }
    }
    return { mock, readings };
  }

  private async controlPhase(
    point: ControlPoint,
    hooks: readonly RegisteredHook[],
    event: object,
    operationId: string | undefined,
    options: DispatchOptions,
    readings: Map<RegisteredHook, Reading> | undefined,
    critical: CriticalDeliveryFailure[],
  ): Promise<ToolVerdict> {
    let verdict: ToolVerdict = ALLOWED;
    let current = event;
    for (const hook of hooks) {
      const decided = verdict.outcome !== 'allowed';
      if (hook.webhook && !hook.handler) {
        if (hook.webhook.responseHandling !== 'toolCall') {
          await this.notify(point, hook, current, operationId, options, critical);
          continue;
        }
        if (decided) continue;
        verdict = this.unlessCancelled(point, hook, await this.askWebhook(point, hook, current, operationId, options), options);
      } else if (readings) {
        // beforeToolCall: plain handlers already ran in the mock phase; controls run now.
        const reading = readings.get(hook);
        if (reading === undefined && !hook.control) continue; // skipped after a mock (M1)
        if (decided) continue;
        if (reading !== undefined) verdict = this.verdictOf(point, hook, reading, false);
        else verdict = this.unlessCancelled(point, hook, await this.askHandler(point, hook, { ...current, mock: () => false } as never, operationId), options);
      } else {
        if (decided && hook.control) continue;
        if (decided) {
          // Every hook has a handler or a webhook: this one has a handler.
          const settling = this.observeHandler(point, hook, current, operationId, options);
          if (settling) await settling;
          continue;
        }
        verdict = await this.askHandler(point, hook, current, operationId);
        if (this.isControl(hook)) verdict = this.unlessCancelled(point, hook, verdict, options);
      }
      if (verdict.outcome !== 'allowed' && current === event) {
        if (point === 'afterToolCall') current = { ...(event as AfterToolCallEvent), result: deniedToolResult(verdict) };
        else if (point === 'afterModelCall') current = deniedModelView(event as AfterModelCallEvent, verdict);
      }
    }
    return verdict;
  }

  private askHandler(point: ControlPoint, hook: RegisteredHook, event: unknown, operationId: string | undefined): Promise<ToolVerdict> {
    return this.ask(point, hook, operationId, 'handler_error', () => this.callHandler(hook, event));
  }

  private askWebhook(
    point: ControlPoint,
    hook: RegisteredHook,
    event: object,
    operationId: string | undefined,
    options: DispatchOptions,
  ): Promise<ToolVerdict> {
    if (options.signal?.aborted) {
      this.record(point, hook, operationId, 'error', this.clock(), 'cancelled');
      return Promise.resolve(blocked(point, hook, 'cancelled'));
    }
    return this.ask(point, hook, operationId, 'network_error', () => {
      if (!this.delivery) throw new DeliveryUnavailableError('no webhook delivery is configured');
      // `undefined` (204, empty, invalid JSON) reads as a notification (W11).
      return this.delivery.control({
        hook,
        point,
        event: event as Readonly<Record<string, unknown>>,
        ...(operationId !== undefined ? { operationId } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    });
  }

  /** Asks one control for its answer, records the outcome, and turns the reading into a verdict. */
  private async ask(
    point: ControlPoint,
    hook: RegisteredHook,
    operationId: string | undefined,
    fallbackCode: string,
    answer: () => Promise<unknown>,
  ): Promise<ToolVerdict> {
    const started = this.clock();
    let reading: Reading;
    try {
      reading = readDecision(await answer(), point);
      this.record(point, hook, operationId, outcomeOf(reading), started, reading.kind === 'invalid' ? 'invalid_response' : undefined);
    } catch (error) {
      reading = { kind: 'error', error };
      this.record(point, hook, operationId, 'error', started, errorCode(error, fallbackCode));
      this.reportError(point, hook, operationId, error);
    }
    return this.verdictOf(point, hook, reading, true);
  }

  /** W12: an allow that arrives from a control after cancellation is still cancelled. */
  private unlessCancelled(point: ControlPoint, hook: RegisteredHook, verdict: ToolVerdict, options: DispatchOptions): ToolVerdict {
    return options.signal?.aborted && verdict.outcome === 'allowed' ? blocked(point, hook, 'cancelled') : verdict;
  }

  /** W8, W11, W12: what one control's reading means for the call. */
  private verdictOf(point: ControlPoint, hook: RegisteredHook, reading: Reading, isControl: boolean): ToolVerdict {
    switch (reading.kind) {
      case 'allow':
      case 'notification':
        return ALLOWED;
      case 'deny':
        return { outcome: 'denied', phase: point, hookId: hook.id, reason: reading.reason, error: 'hook_denied' };
      case 'invalid':
        return isControl && hook.onError === 'block' ? blocked(point, hook, 'invalid_response') : ALLOWED;
      case 'error': {
        const code = errorCode(reading.error, 'handler_error');
        // Cancellation never grants permission (W12), whatever onError says.
        if (code === 'cancelled') return blocked(point, hook, code);
        return isControl && hook.onError === 'block' ? blocked(point, hook, code) : ALLOWED;
      }
    }
  }

  /**
   * One handler observes. Returns `undefined` when it is done (a synchronous handler is not awaited: same
   * semantics, no microtask), else the promise of its settling. An engine hook's `fail` throws.
   */
  private observeHandler(point: HookPoint, hook: RegisteredHook, payload: unknown, operationId: string | undefined, options: DispatchOptions): Promise<void> | undefined {
    const started = this.clock();
    let returned: unknown;
    try {
      const arg = HOOK_POINTS[point].family === 'engine' ? this.invocation(point, hook, payload, options) : withInertMock(point, payload);
      returned = this.invoke(hook, arg);
    } catch (error) {
      this.handlerFailed(point, hook, operationId, error, started);
      return undefined;
    }
    if (!isThenable(returned)) {
      this.record(point, hook, operationId, 'ok', started);
      return undefined;
    }
    return this.settleHandler(point, hook, returned, operationId, started);
  }

  private async settleHandler(point: HookPoint, hook: RegisteredHook, returned: PromiseLike<unknown>, operationId: string | undefined, started: number): Promise<void> {
    try {
      await returned;
    } catch (error) {
      this.handlerFailed(point, hook, operationId, error, started);
      return;
    }
    this.record(point, hook, operationId, 'ok', started);
  }

  private handlerFailed(point: HookPoint, hook: RegisteredHook, operationId: string | undefined, error: unknown, started: number): void {
    this.record(point, hook, operationId, 'error', started, errorCode(error, 'handler_error'));
    if (HOOK_POINTS[point].family === 'engine') this.engineFailure(point, hook, operationId, error);
    else this.reportError(point, hook, operationId, error);
  }

  private async notify(
    point: HookPoint,
    hook: RegisteredHook,
    payload: unknown,
    operationId: string | undefined,
    options: DispatchOptions,
    critical: CriticalDeliveryFailure[],
  ): Promise<void> {
    const started = this.clock();
    try {
      if (!this.delivery) throw new DeliveryUnavailableError('no webhook delivery is configured');
      await this.delivery.notify({
        hook,
        point,
        event: payload as Readonly<Record<string, unknown>>,
        ...(operationId !== undefined ? { operationId } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      this.record(point, hook, operationId, 'ok', started);
    } catch (error) {
      const code = errorCode(error, 'network_error');
      this.record(point, hook, operationId, 'error', started, code);
      this.reportError(point, hook, operationId, error);
      // D2: `fallback: 'none'` failures are collected and thrown once all siblings ran; others are logged (D1).
      if (hook.webhook?.fallback === 'none') critical.push({ point, hookId: hook.id, code });
    }
  }

  /** Calls a handler; returns its value, or a promise when it is async or has a timeout. */
  private invoke(hook: RegisteredHook, arg: unknown): unknown {
    const result = (hook.handler as (a: unknown) => unknown)(arg);
    if (hook.timeoutMs === undefined) return result;
    return withTimeout(Promise.resolve(result), hook.timeoutMs);
  }

  private async callHandler(hook: RegisteredHook, arg: unknown): Promise<unknown> {
    return await this.invoke(hook, arg);
  }

  private invocation(point: HookPoint, hook: RegisteredHook, payload: unknown, options: DispatchOptions): HookInvocation {
    // In an `on_run_start` chain each hook sees the context as the previous hook left it.
    const runContext = point === 'on_run_start' && hasBrand(payload, RunContext.brand) ? (payload as RunContext) : options.runContext;
    return new HookInvocation({
      point,
      payload,
      ...(hook.plugin !== undefined ? { plugin: hook.plugin } : {}),
      ...(hook.method !== undefined ? { method: hook.method } : {}),
      ...(hook.ref !== undefined ? { ref: hook.ref } : {}),
      ...(runContext ? { runContext } : {}),
      metadata: options.metadata ?? NO_METADATA,
    });
  }

  /** Engine family (E6, DESIGN §3): `fail` throws `HookFailedError`; `warn` and never-propagating points log. */
  private engineFailure(point: HookPoint, hook: RegisteredHook, operationId: string | undefined, error: unknown, detail?: string): void {
    this.errorSubject.next({ point, hookId: hook.id, ...(operationId !== undefined ? { operationId } : {}), errorType: errorType(error), error });
    if (hook.failurePolicy === 'fail' && !hookPointSpec(point).neverPropagates) {
      throw new HookFailedError(point, hook.id, error, detail);
    }
    this.logger.warn(`hook ${hook.id} at ${point} failed (${errorType(error)}); continuing`);
  }

  /** Agent family (D1) and webhooks: logged with point, hook id and error type (never the message); dispatch goes on. */
  private reportError(point: HookPoint, hook: RegisteredHook, operationId: string | undefined, error: unknown): void {
    this.errorSubject.next({ point, hookId: hook.id, ...(operationId !== undefined ? { operationId } : {}), errorType: errorType(error), error });
    this.logger.warn(`hook ${hook.id} at ${point} failed (${errorType(error)}, ${errorCode(error, 'handler_error')})`);
  }

  private record(point: HookPoint, hook: RegisteredHook, operationId: string | undefined, outcome: HookOutcome, started: number, code?: string): void {
    if (!this.recording()) return;
    // One literal shape for every record keeps this monomorphic (spreads here cost microseconds per hook).
    const record: HookOutcomeRecord = {
      operationId,
      point,
      hookId: hook.id,
      source: hook.source,
      outcome,
      errorCode: code,
      latencyMs: performance.now() - started,
      // Local dispatch runs the handler when a hook has one (W2), so no handler means the webhook ran.
      transport: hook.handler ? 'handler' : 'webhook',
    };
    if (this.sink) {
      try {
        this.sink.record(record);
      } catch (error) {
        this.logger.error(`outcome sink failed (${errorType(error)})`);
      }
    }
    if (this.outcomeSubject.observed) this.outcomeSubject.next(record);
  }

  /**
   * A verdict of the runtime's own (no hook decided it), so the timeline shows it next to the hooks: a
   * call to a tool the agent was not offered (G1) is a `denied` row with its code.
   */
  recordRuntimeVerdict(point: HookPoint, operationId: string, hookId: string, outcome: HookOutcome, code: string, toolCallId?: string): void {
    if (!this.recording()) return;
    const record: HookOutcomeRecord = { operationId, point, hookId, source: 'runtime', outcome, errorCode: code, latencyMs: 0, transport: 'handler', toolCallId };
    if (this.sink) {
      try {
        this.sink.record(record);
      } catch (error) {
        this.logger.error(`outcome sink failed (${errorType(error)})`);
      }
    }
    if (this.outcomeSubject.observed) this.outcomeSubject.next(record);
  }

  /** Whether anyone takes outcome records right now (a sink that is active, or an `outcomes$` subscriber). */
  private recording(): boolean {
    return (this.sink !== undefined && this.sink !== null && this.sink.active !== false) || this.outcomeSubject.observed;
  }

  /** A start time for latency, only when a record will be taken (the clock read is most of a no-op hook's cost). */
  private clock(): number {
    return this.recording() ? performance.now() : 0;
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

  private toolNameOf(payload: unknown): string | undefined {
    const p = payload as { identifier?: unknown; apiName?: unknown } | null;
    if (p && typeof p === 'object' && typeof p.identifier === 'string' && typeof p.apiName === 'string') {
      return `${p.identifier}/${p.apiName}`;
    }
    return undefined;
  }
}
