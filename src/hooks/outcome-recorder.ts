/**
 * The outcome recorder: one `HookOutcomeRecord` per hook invocation (and per verdict the runtime reaches
 * itself), handed to the outcome sink and streamed on `outcomes$`. Records never carry a payload.
 *
 * Nobody taking records (no active sink, no subscriber) costs nothing: no record is built and no clock is
 * read, so a dispatch with hooks stays as cheap as the hooks themselves (E3).
 */
import { Inject, Injectable, Logger, Optional, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Observable, Subject } from 'rxjs';
import { errorType } from './hook-errors.js';
import type { HookOutcome, HookOutcomeRecord } from './hook-outcome.js';
import type { HookPoint } from './hook-points.js';
import { HOOK_OUTCOME_SINK, type HookOutcomeSink } from './hook-ports.js';
import type { RegisteredHook } from './registered-hook.js';

@Injectable()
export class OutcomeRecorder implements OnModuleInit {
  private readonly logger = new Logger('AgentHooks');
  private readonly outcomeSubject = new Subject<HookOutcomeRecord>();

  /** Every outcome record, as it happens. */
  readonly outcomes$: Observable<HookOutcomeRecord> = this.outcomeSubject.asObservable();

  constructor(
    @Optional() @Inject(HOOK_OUTCOME_SINK) private sink?: HookOutcomeSink,
    @Optional() private readonly moduleRef?: ModuleRef,
  ) {}

  /** A host app may provide the outcome sink in any of its modules, not only in this one's scope. */
  onModuleInit(): void {
    if (this.sink || !this.moduleRef) return;
    try {
      this.sink = this.moduleRef.get<HookOutcomeSink>(HOOK_OUTCOME_SINK, { strict: false });
    } catch {
      // none provided: outcomes are only streamed on `outcomes$`
    }
  }

  /** One hook's invocation, `started` being what `clock()` gave before it ran. */
  record(point: HookPoint, hook: RegisteredHook, operationId: string | undefined, outcome: HookOutcome, started: number, code?: string): void {
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
    this.emit(record);
  }

  /**
   * A verdict of the runtime's own (no hook decided it), so the timeline shows it next to the hooks: a
   * call to a tool the agent was not offered (G1) is a `denied` row with its code.
   */
  recordRuntimeVerdict(point: HookPoint, operationId: string, hookId: string, outcome: HookOutcome, code: string, toolCallId?: string): void {
    if (!this.recording()) return;
    this.emit({ operationId, point, hookId, source: 'runtime', outcome, errorCode: code, latencyMs: 0, transport: 'handler', toolCallId });
  }

  /** A start time for latency, only when a record will be taken (the clock read is most of a no-op hook's cost). */
  clock(): number {
    return this.recording() ? performance.now() : 0;
  }

  /** Whether anyone takes outcome records right now (a sink that is active, or an `outcomes$` subscriber). */
  private recording(): boolean {
    return (this.sink !== undefined && this.sink !== null && this.sink.active !== false) || this.outcomeSubject.observed;
  }

  /** The sink must not throw (hook-ports.ts); if it does, the dispatch goes on and the failure is logged. */
  private emit(record: HookOutcomeRecord): void {
    if (this.sink) {
      try {
        this.sink.record(record);
      } catch (error) {
        this.logger.error(`outcome sink failed (${errorType(error)})`);
      }
    }
    if (this.outcomeSubject.observed) this.outcomeSubject.next(record);
  }
}
