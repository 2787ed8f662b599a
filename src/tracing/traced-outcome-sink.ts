/**
 * SPEC O1 for hooks: every hook invocation the dispatcher records (one `HookOutcomeRecord`, at its end) is
 * also a span — a control hook or a webhook delivery: point, hook id, source, outcome, error code — or, for
 * an observe-only in-process hook, an event on the active span (the step's tool call or model call). The
 * record is seen at the end, so the span is recorded after the fact from its latency. Records still go to
 * the timeline first, unchanged.
 */
import type { HookOutcomeRecord } from '../hooks/hook-outcome.js';
import type { HookOutcomeSink } from '../hooks/hook-ports.js';
import type { AgentTracer, SpanAttributes } from './agent-tracer.js';
import { OURS } from './gen-ai-attributes.js';

export class TracedOutcomeSink implements HookOutcomeSink {
  constructor(
    private readonly timeline: HookOutcomeSink,
    private readonly tracer: AgentTracer,
  ) {}

  /** Records are built while the timeline keeps them or a span would be recorded (an SDK, in a trace). */
  get active(): boolean {
    return this.timeline.active !== false || this.tracer.recordsHere;
  }

  record(outcome: HookOutcomeRecord): void {
    if (this.timeline.active !== false) this.timeline.record(outcome);
    if (!this.tracer.recordsHere) return;
    // No spreads: this runs for every hook invocation while traced (an event's attributes keep `undefined` keys).
    const attributes: SpanAttributes = {
      [OURS.hookPoint]: outcome.point,
      [OURS.hookId]: outcome.hookId,
      [OURS.hookSource]: outcome.source,
      [OURS.hookOutcome]: outcome.outcome,
    };
    if (outcome.transport !== undefined) attributes[OURS.hookTransport] = outcome.transport;
    if (outcome.errorCode !== undefined) attributes[OURS.hookErrorCode] = outcome.errorCode;
    if (outcome.operationId !== undefined) attributes[OURS.operationId] = outcome.operationId;
    const observeOnly = outcome.transport !== 'webhook' && (outcome.outcome === 'ok' || outcome.outcome === 'notification');
    if (observeOnly) return this.tracer.event(`hook ${outcome.point}`, attributes);
    const end = Date.now();
    const name = outcome.transport === 'webhook' ? `webhook ${outcome.point}` : `hook ${outcome.point}`;
    this.tracer.recordSpan(name, attributes, end - outcome.latencyMs, end, outcome.outcome === 'error' ? (outcome.errorCode ?? 'hook_error') : undefined);
  }
}
