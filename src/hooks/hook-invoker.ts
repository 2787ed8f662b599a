/**
 * The hook invoker: runs one hook — calls its handler (under its timeout), or delivers its notification
 * webhook — records the outcome, and applies the failure handling of its family (DESIGN §3): an engine
 * hook's `failure_policy` (E6), an agent handler's or a webhook's log-and-go-on (D1), a `fallback: 'none'`
 * delivery's collected failure (D2). Handled failures go out on `errors$`.
 */
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { Observable, Subject } from 'rxjs';
import { hasBrand } from './context-brand.js';
import { RunContext } from './contexts.js';
import type { DispatchOptions } from './dispatch-options.js';
import { DeliveryUnavailableError, isThenable, withInertMock } from './dispatch-support.js';
import { errorCode, errorType, HookFailedError, type CriticalDeliveryFailure } from './hook-errors.js';
import { HookInvocation } from './hook-invocation.js';
import type { HookErrorEvent } from './hook-pipeline.js';
import { HOOK_POINTS, hookPointSpec, type HookPoint } from './hook-points.js';
import { WEBHOOK_DELIVERY, type WebhookDeliveryPort } from './hook-ports.js';
import { withTimeout } from './hook-timeout.js';
import { OutcomeRecorder } from './outcome-recorder.js';
import type { RegisteredHook } from './registered-hook.js';

const NO_METADATA: Readonly<Record<string, unknown>> = Object.freeze({});

@Injectable()
export class HookInvoker {
  private readonly logger = new Logger('AgentHooks');
  private readonly errorSubject = new Subject<HookErrorEvent>();

  /** Hook failures that were handled by policy instead of thrown (the unhandled-exception bus). */
  readonly errors$: Observable<HookErrorEvent> = this.errorSubject.asObservable();

  constructor(
    private readonly recorder: OutcomeRecorder,
    @Optional() @Inject(WEBHOOK_DELIVERY) private readonly delivery?: WebhookDeliveryPort,
  ) {}

  /**
   * One handler observes. Returns `undefined` when it is done (a synchronous handler is not awaited: same
   * semantics, no microtask), else the promise of its settling. An engine hook's `fail` throws.
   */
  observeHandler(point: HookPoint, hook: RegisteredHook, payload: unknown, operationId: string | undefined, options: DispatchOptions): Promise<void> | undefined {
    const started = this.recorder.clock();
    let returned: unknown;
    try {
      const arg = HOOK_POINTS[point].family === 'engine' ? this.invocation(point, hook, payload, options) : withInertMock(point, payload);
      returned = this.invoke(hook, arg);
    } catch (error) {
      this.handlerFailed(point, hook, operationId, error, started);
      return undefined;
    }
    if (!isThenable(returned)) {
      this.recorder.record(point, hook, operationId, 'ok', started);
      return undefined;
    }
    return this.settleHandler(point, hook, returned, operationId, started);
  }

  /**
   * Delivers a notification webhook. D2: a `fallback: 'none'` failure is added to `critical`, which the
   * dispatch throws once all siblings ran; other failures are logged (D1).
   */
  async notify(
    point: HookPoint,
    hook: RegisteredHook,
    payload: unknown,
    operationId: string | undefined,
    options: DispatchOptions,
    critical: CriticalDeliveryFailure[],
  ): Promise<void> {
    const started = this.recorder.clock();
    try {
      if (!this.delivery) throw new DeliveryUnavailableError('no webhook delivery is configured');
      await this.delivery.notify({
        hook,
        point,
        event: payload as Readonly<Record<string, unknown>>,
        ...(operationId !== undefined ? { operationId } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      this.recorder.record(point, hook, operationId, 'ok', started);
    } catch (error) {
      const code = errorCode(error, 'network_error');
      this.recorder.record(point, hook, operationId, 'error', started, code);
      this.reportError(point, hook, operationId, error);
      if (hook.webhook?.fallback === 'none') critical.push({ point, hookId: hook.id, code });
    }
  }

  /** Calls a handler and awaits what it returns (under its timeout); records nothing. */
  async callHandler(hook: RegisteredHook, arg: unknown): Promise<unknown> {
    return await this.invoke(hook, arg);
  }

  /** The argument an engine-family handler gets. */
  invocation(point: HookPoint, hook: RegisteredHook, payload: unknown, options: DispatchOptions): HookInvocation {
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
  engineFailure(point: HookPoint, hook: RegisteredHook, operationId: string | undefined, error: unknown, detail?: string): void {
    this.errorSubject.next({ point, hookId: hook.id, ...(operationId !== undefined ? { operationId } : {}), errorType: errorType(error), error });
    if (hook.failurePolicy === 'fail' && !hookPointSpec(point).neverPropagates) {
      throw new HookFailedError(point, hook.id, error, detail);
    }
    this.logger.warn(`hook ${hook.id} at ${point} failed (${errorType(error)}); continuing`);
  }

  /** Agent family (D1) and webhooks: logged with point, hook id and error type (never the message); dispatch goes on. */
  reportError(point: HookPoint, hook: RegisteredHook, operationId: string | undefined, error: unknown): void {
    this.errorSubject.next({ point, hookId: hook.id, ...(operationId !== undefined ? { operationId } : {}), errorType: errorType(error), error });
    this.logger.warn(`hook ${hook.id} at ${point} failed (${errorType(error)}, ${errorCode(error, 'handler_error')})`);
  }

  private async settleHandler(point: HookPoint, hook: RegisteredHook, returned: PromiseLike<unknown>, operationId: string | undefined, started: number): Promise<void> {
    try {
      await returned;
    } catch (error) {
      this.handlerFailed(point, hook, operationId, error, started);
      return;
    }
    this.recorder.record(point, hook, operationId, 'ok', started);
  }

  private handlerFailed(point: HookPoint, hook: RegisteredHook, operationId: string | undefined, error: unknown, started: number): void {
    this.recorder.record(point, hook, operationId, 'error', started, errorCode(error, 'handler_error'));
    if (HOOK_POINTS[point].family === 'engine') this.engineFailure(point, hook, operationId, error);
    else this.reportError(point, hook, operationId, error);
  }

  /** Calls a handler; returns its value, or a promise when it is async or has a timeout. */
  private invoke(hook: RegisteredHook, arg: unknown): unknown {
    const result = (hook.handler as (a: unknown) => unknown)(arg);
    if (hook.timeoutMs === undefined) return result;
    return withTimeout(Promise.resolve(result), hook.timeoutMs);
  }
}
