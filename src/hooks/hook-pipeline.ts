/**
 * RxJS surface of the dispatcher, in the style of `@nestjs/cqrs` buses: the dispatcher is an Observable
 * of dispatched events, and these operators narrow it.
 */
import { filter, type OperatorFunction } from 'rxjs';
import type { HookOutcome, HookOutcomeRecord } from './hook-outcome.js';
import type { HookPayloads, HookPoint } from './hook-points.js';

/** One dispatched event as observers see it (observation form: no callbacks, M2). */
export interface DispatchedEvent<P extends HookPoint = HookPoint> {
  readonly point: P;
  readonly operationId?: string;
  readonly payload: P extends 'beforeToolCall' | 'beforeModelCall' ? Omit<HookPayloads[P], 'mock'> : HookPayloads[P];
}

/** A hook failure that was handled (logged, policy applied) rather than thrown; subscribe to alert on it. */
export interface HookErrorEvent {
  readonly point: HookPoint;
  readonly hookId: string;
  readonly operationId?: string;
  readonly errorType: string;
  readonly error: unknown;
}

/** `dispatcher.pipe(ofPoint('afterToolCall', 'onToolCallError'))` */
export function ofPoint<P extends HookPoint>(...points: P[]): OperatorFunction<DispatchedEvent, DispatchedEvent<P>> {
  const wanted = new Set<HookPoint>(points);
  return filter((event): event is DispatchedEvent<P> => wanted.has(event.point));
}

/** `dispatcher.outcomes$.pipe(ofOutcome('denied', 'error'))` */
export function ofOutcome(...outcomes: HookOutcome[]): OperatorFunction<HookOutcomeRecord, HookOutcomeRecord> {
  const wanted = new Set(outcomes);
  return filter((record) => wanted.has(record.outcome));
}
