/**
 * The gate a tool call (and a model call, K1) passes, DESIGN §3: before it, in-memory handlers first with
 * the mock short-circuit (M1), then the controls in order — webhooks with `responseHandling: 'toolCall'` and
 * handlers returning a decision (W14); after it, the controls judge the (transformed) result in order. A
 * deny or a blocking control error decides (W8, W9, W12); a mocked call is still subject to the controls.
 *
 * The dispatcher calls it only for a point with hooks, having announced the event to observers.
 */
import { Inject, Injectable, Optional } from '@nestjs/common';
import type { AfterToolCallEvent } from './agent-events.js';
import { readDecision, type DecisionReading } from './decision.js';
import type { DispatchOptions } from './dispatch-options.js';
import { blocked, DeliveryUnavailableError, isControl, matching, outcomeOf } from './dispatch-support.js';
import { CriticalHookDeliveryError, errorCode, type CriticalDeliveryFailure } from './hook-errors.js';
import { HookInvoker } from './hook-invoker.js';
import type { ControlPoint } from './hook-points.js';
import { WEBHOOK_DELIVERY, type WebhookDeliveryPort } from './hook-ports.js';
import type { AfterModelCallEvent } from './model-call-events.js';
import { deniedModelView } from './model-call-gate.js';
import { OutcomeRecorder } from './outcome-recorder.js';
import type { RegisteredHook } from './registered-hook.js';
import { ALLOWED, deniedToolResult, type ToolVerdict } from './tool-verdict.js';

/** The points where a handler may `mock()` the call. */
export type MockPoint = 'beforeToolCall' | 'beforeModelCall';
/** The points whose controls judge what the call produced. */
export type ResultPoint = 'afterToolCall' | 'afterModelCall';

type Reading = DecisionReading | { kind: 'error'; error: unknown };

@Injectable()
export class CallGate {
  constructor(
    private readonly invoker: HookInvoker,
    private readonly recorder: OutcomeRecorder,
    @Optional() @Inject(WEBHOOK_DELIVERY) private readonly delivery?: WebhookDeliveryPort,
  ) {}

  /** M1/M2: the mock phase alone — the first accepted mock wins; no webhooks sent, no controls asked. */
  async mockOnly<M>(point: MockPoint, hooks: readonly RegisteredHook[], event: object, operationId: string | undefined, accept: (offered: unknown) => M | null): Promise<M | null> {
    const { mock } = await this.mockPhase(point, matching(hooks, event), event, operationId, accept);
    return mock;
  }

  /** Before the call: the mock phase, then the controls in order. */
  async before<M>(
    point: MockPoint,
    hooks: readonly RegisteredHook[],
    event: object,
    operationId: string | undefined,
    options: DispatchOptions,
    accept: (offered: unknown) => M | null,
  ): Promise<{ mock: M | null; verdict: ToolVerdict }> {
    const matched = matching(hooks, event);
    const { mock, readings } = await this.mockPhase(point, matched, event, operationId, accept);
    const critical: CriticalDeliveryFailure[] = [];
    const verdict = await this.controlPhase(point, matched, event, operationId, options, readings, critical);
    if (critical.length > 0) throw new CriticalHookDeliveryError(critical);
    return { mock, verdict };
  }

  /** After the call: handlers observe, controls judge the result in order; a deny replaces it for later hooks (W9). */
  async after(point: ResultPoint, hooks: readonly RegisteredHook[], event: object, operationId: string | undefined, options: DispatchOptions): Promise<ToolVerdict> {
    const critical: CriticalDeliveryFailure[] = [];
    const verdict = await this.controlPhase(point, matching(hooks, event), event, operationId, options, undefined, critical);
    if (critical.length > 0) throw new CriticalHookDeliveryError(critical);
    return verdict;
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
      const started = this.recorder.clock();
      try {
        const returned = await this.invoker.callHandler(hook, handlerEvent);
        const reading = readDecision(returned, point);
        readings.set(hook, reading);
        this.recorder.record(point, hook, operationId, mockedHere ? 'mocked' : outcomeOf(reading), started, reading.kind === 'invalid' ? 'invalid_response' : undefined);
      } catch (error) {
        readings.set(hook, { kind: 'error', error });
        this.recorder.record(point, hook, operationId, 'error', started, errorCode(error, 'handler_error'));
        this.invoker.reportError(point, hook, operationId, error);
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
          await this.invoker.notify(point, hook, current, operationId, options, critical);
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
          const settling = this.invoker.observeHandler(point, hook, current, operationId, options);
          if (settling) await settling;
          continue;
        }
        verdict = await this.askHandler(point, hook, current, operationId);
        if (isControl(hook)) verdict = this.unlessCancelled(point, hook, verdict, options);
      }
      if (verdict.outcome !== 'allowed' && current === event) {
        if (point === 'afterToolCall') current = { ...(event as AfterToolCallEvent), result: deniedToolResult(verdict) };
        else if (point === 'afterModelCall') current = deniedModelView(event as AfterModelCallEvent, verdict);
      }
    }
    return verdict;
  }

  private askHandler(point: ControlPoint, hook: RegisteredHook, event: unknown, operationId: string | undefined): Promise<ToolVerdict> {
    return this.ask(point, hook, operationId, 'handler_error', () => this.invoker.callHandler(hook, event));
  }

  private askWebhook(point: ControlPoint, hook: RegisteredHook, event: object, operationId: string | undefined, options: DispatchOptions): Promise<ToolVerdict> {
    if (options.signal?.aborted) {
      this.recorder.record(point, hook, operationId, 'error', this.recorder.clock(), 'cancelled');
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
  private async ask(point: ControlPoint, hook: RegisteredHook, operationId: string | undefined, fallbackCode: string, answer: () => Promise<unknown>): Promise<ToolVerdict> {
    const started = this.recorder.clock();
    let reading: Reading;
    try {
      reading = readDecision(await answer(), point);
      this.recorder.record(point, hook, operationId, outcomeOf(reading), started, reading.kind === 'invalid' ? 'invalid_response' : undefined);
    } catch (error) {
      reading = { kind: 'error', error };
      this.recorder.record(point, hook, operationId, 'error', started, errorCode(error, fallbackCode));
      this.invoker.reportError(point, hook, operationId, error);
    }
    return this.verdictOf(point, hook, reading, true);
  }

  /** W12: an allow that arrives from a control after cancellation is still cancelled. */
  private unlessCancelled(point: ControlPoint, hook: RegisteredHook, verdict: ToolVerdict, options: DispatchOptions): ToolVerdict {
    return options.signal?.aborted && verdict.outcome === 'allowed' ? blocked(point, hook, 'cancelled') : verdict;
  }

  /** W8, W11, W12: what one control's reading means for the call. */
  private verdictOf(point: ControlPoint, hook: RegisteredHook, reading: Reading, isControlAsked: boolean): ToolVerdict {
    switch (reading.kind) {
      case 'allow':
      case 'notification':
        return ALLOWED;
      case 'deny':
        return { outcome: 'denied', phase: point, hookId: hook.id, reason: reading.reason, error: 'hook_denied' };
      case 'invalid':
        return isControlAsked && hook.onError === 'block' ? blocked(point, hook, 'invalid_response') : ALLOWED;
      case 'error': {
        const code = errorCode(reading.error, 'handler_error');
        // Cancellation never grants permission (W12), whatever onError says.
        if (code === 'cancelled') return blocked(point, hook, code);
        return isControlAsked && hook.onError === 'block' ? blocked(point, hook, code) : ALLOWED;
      }
    }
  }
}
