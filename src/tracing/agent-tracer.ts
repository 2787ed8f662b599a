/**
 * The runtime's one way to OpenTelemetry (SPEC O1–O5, DESIGN §6 Tracing). Spans go to whatever SDK the host
 * registered; without `@opentelemetry/api` installed, or with no SDK, every method is a cheap no-op (O5).
 *
 * An operation's trace outlives its process (O3): `startOperation` starts `invoke_agent <agentId>` under
 * the active context (an inbound request's `traceparent`, a parent operation's tool call) and returns its
 * W3C context, which is stored with the operation. Every later step — after an approval, after a restart,
 * on another queue worker — runs `inOperation(stored)`, so its spans are children of that span, in one
 * trace, wherever they run. Attributes carry identifiers, counts and outcomes only (O4); an error is its
 * `error.type` (S3), never its message.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { Attributes, Context, Span, SpanContext, Tracer, TracerProvider } from '@opentelemetry/api';
import { errorType } from '../hooks/hook-errors.js';
import { ERROR_TYPE, GEN_AI, OURS } from './gen-ai-attributes.js';
import { OPEN_TELEMETRY, type OpenTelemetryApi } from './open-telemetry.js';
import { TRACING_SETTINGS, type TracingSettings } from './tracing-settings.js';

/** What is stored with an operation: W3C trace context, no baggage, nothing secret. */
export interface StoredTraceContext {
  traceparent: string;
  tracestate?: string;
}

/** What names an operation's trace segment. */
export interface OperationTraceRef {
  id: string;
  agentId: string;
  traceContext?: StoredTraceContext;
}

export type SpanAttributes = Attributes;

/**
 * A span's attributes, or how to build them: a function is called only when a span is started (an SDK is
 * registered), so a run without one builds no attribute objects (O5).
 */
export type LazyAttributes = SpanAttributes | (() => SpanAttributes);

/** A span as the runtime uses it. */
export interface TraceSpan {
  readonly recording: boolean;
  set(attributes: SpanAttributes): void;
  /** Marks the span failed with the error's type only (S3). */
  fail(errorType: string): void;
  end(): void;
}

const NOOP_SPAN: TraceSpan = Object.freeze({ recording: false, set: () => undefined, fail: () => undefined, end: () => undefined });

/** `00-<trace id>-<span id>-<flags>` (W3C Trace Context, version 00). */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
/** Where a `traceparent`'s span id begins (`00-` and the 32-digit trace id before it). */
const SPAN_ID_AT = 36;
/** A stored or received `tracestate` is bounded as the W3C spec bounds it (32 members, 512 characters). */
const MAX_TRACESTATE = 512;

const PACKAGE_NAME = 'nest-agent-hooks';

class OtelSpan implements TraceSpan {
  constructor(
    readonly span: Span,
    private readonly otel: OpenTelemetryApi,
  ) {}

  get recording(): boolean {
    return this.span.isRecording();
  }

  set(attributes: SpanAttributes): void {
    this.span.setAttributes(attributes);
  }

  fail(errorType: string): void {
    this.span.setAttribute(ERROR_TYPE, errorType);
    this.span.setStatus({ code: this.otel.SpanStatusCode.ERROR });
  }

  end(): void {
    this.span.end();
  }

  /** A throw out of the span's work: its `error.type`, then the end. */
  failAndEnd(error: unknown): void {
    this.fail(errorType(error));
    this.span.end();
  }
}

/** The API's global provider (a `ProxyTracerProvider`): its delegate is the SDK's provider, once one is registered. */
interface DelegatingProvider extends TracerProvider {
  getDelegateTracer?(name: string): Tracer | undefined;
}

@Injectable()
export class AgentTracer {
  /** The SDK's tracer, resolved at the first span after the host registered an SDK (as a `ProxyTracer` keeps it). */
  private sdkTracer: Tracer | undefined;

  constructor(
    @Inject(OPEN_TELEMETRY) private readonly otel: OpenTelemetryApi | null,
    @Inject(TRACING_SETTINGS) private readonly settings: TracingSettings,
  ) {}

  /**
   * The tracer spans start on, or none while no SDK is registered (O5): then no span would record, and the
   * active context — an inbound or stored `traceparent` — is already what a no-op span would carry, so
   * nothing is started at all. Followed at every call until an SDK appears, then kept.
   */
  private tracer(): Tracer | undefined {
    if (this.sdkTracer || !this.otel) return this.sdkTracer;
    const provider: DelegatingProvider = this.otel.trace.getTracerProvider();
    // Another provider than the API's proxy (a host that registered its own global): it is the SDK.
    const tracer = typeof provider.getDelegateTracer === 'function' ? provider.getDelegateTracer(PACKAGE_NAME) : provider.getTracer(PACKAGE_NAME);
    if (tracer) this.sdkTracer = tracer;
    return tracer;
  }

  /** O4: whether prompts, arguments and results may go on spans (never secrets). */
  get captureContent(): boolean {
    return this.settings.captureContent;
  }

  /** `invoke_agent <agentId>` for a new operation, child of the active context, and the context to store (O3). */
  startOperation(agentId: string, operationId: string): { span: TraceSpan; stored?: StoredTraceContext } {
    if (!this.otel) return { span: NOOP_SPAN };
    const tracer = this.tracer();
    if (!tracer) {
      // No SDK: the caller's context (an inbound `traceparent`), if any, is what later steps propagate.
      const caller = this.otel.trace.getSpanContext(this.otel.context.active());
      const stored = caller && this.otel.trace.isSpanContextValid(caller) ? serialize(caller) : undefined;
      return { span: NOOP_SPAN, ...(stored ? { stored } : {}) };
    }
    const span = tracer.startSpan(`invoke_agent ${agentId}`, {
      kind: this.otel.SpanKind.INTERNAL,
      attributes: { [GEN_AI.operationName]: 'invoke_agent', [GEN_AI.agentName]: agentId, [GEN_AI.conversationId]: operationId, [OURS.operationId]: operationId },
    });
    const stored = serialize(span.spanContext());
    return { span: new OtelSpan(span, this.otel), ...(stored ? { stored } : {}) };
  }

  /** Runs `work` with `span` active (the operation's own `invoke_agent`, while this process drives it). */
  within<T>(span: TraceSpan, work: () => T): T {
    if (!this.otel || !(span instanceof OtelSpan)) return work();
    return this.otel.context.with(this.otel.trace.setSpan(this.otel.context.active(), span.span), work);
  }

  /** Runs `work` in the operation's stored trace context (O3): the spans it starts join the operation's trace. */
  private inOperation<T>(stored: StoredTraceContext | undefined, work: () => T): T {
    if (!this.otel || !stored) return work();
    const spanContext = this.parse(stored);
    if (!spanContext) return work();
    return this.otel.context.with(this.otel.trace.setSpanContext(this.otel.context.active(), spanContext), work);
  }

  /**
   * Work of the operation (O3): a step, a decision's notification, a deferred result's after-chain, the
   * terminal sequence. In the process whose `invoke_agent` span is still active, it runs under it; anywhere
   * else (after an approval or a restart, on a queue worker, from the reconciler) under a new
   * `invoke_agent <agentId>` span, child of the stored context, so its hooks and webhooks are spans and
   * events of that segment of the operation's trace.
   */
  segment<T>(operation: OperationTraceRef | undefined, work: () => Promise<T>): Promise<T> {
    // Not `async` (one promise and tick less per step): a synchronous throw still reaches the caller as a rejection.
    try {
      return this.segmentOf(operation, work);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private segmentOf<T>(operation: OperationTraceRef | undefined, work: () => Promise<T>): Promise<T> {
    const stored = operation?.traceContext;
    if (!this.otel || !operation || !stored) return work();
    const active = this.otel.trace.getActiveSpan();
    if (active?.isRecording() && stored.traceparent.startsWith(active.spanContext().spanId, SPAN_ID_AT)) return work();
    // No SDK: the stored context made active is all the step's webhooks need to propagate (O2).
    if (!this.tracer()) return this.inOperation(stored, work);
    return this.inOperation(stored, () =>
      this.span(`invoke_agent ${operation.agentId}`, 'internal', () => ({ [GEN_AI.operationName]: 'invoke_agent', [GEN_AI.agentName]: operation.agentId, [GEN_AI.conversationId]: operation.id, [OURS.operationId]: operation.id, [OURS.resumed]: true }), work),
    );
  }

  /** A span around `work`, child of the active one and active while `work` runs; a throw is its `error.type`. */
  span<T>(name: string, kind: 'internal' | 'client', attributes: LazyAttributes, work: (span: TraceSpan) => Promise<T>): Promise<T> {
    // Not `async`, as `segment`: without an SDK, `work` is all there is.
    try {
      return this.spanOf(name, kind, attributes, work);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private spanOf<T>(name: string, kind: 'internal' | 'client', attributes: LazyAttributes, work: (span: TraceSpan) => Promise<T>): Promise<T> {
    const tracer = this.tracer();
    if (!this.otel || !tracer) return work(NOOP_SPAN);
    const otel = this.otel;
    // One read of the active context: the span's parent, and what the span's own context extends.
    const parent = otel.context.active();
    const span = tracer.startSpan(name, { kind: kind === 'client' ? otel.SpanKind.CLIENT : otel.SpanKind.INTERNAL, attributes: typeof attributes === 'function' ? attributes() : attributes }, parent);
    // Sampled out, with nothing to propagate: no context switch.
    if (!span.isRecording() && !otel.trace.isSpanContextValid(span.spanContext())) return work(NOOP_SPAN);
    return this.runIn(span, parent, work);
  }

  /**
   * `work` with `span` active; the span ends when `work` settles. Not `async`: with a context manager, every
   * promise pays its init hook (and carries the context), and an async frame around an `await` is two more.
   */
  private runIn<T>(span: Span, parent: Context, work: (span: TraceSpan) => Promise<T>): Promise<T> {
    const otel = this.otel!;
    const traced = new OtelSpan(span, otel);
    let settled: Promise<T>;
    try {
      settled = otel.context.with(otel.trace.setSpan(parent, span), work, undefined, traced);
    } catch (error) {
      traced.failAndEnd(error);
      return Promise.reject(error);
    }
    return settled.then(
      (value) => {
        span.end();
        return value;
      },
      (error: unknown) => {
        traced.failAndEnd(error);
        throw error;
      },
    );
  }

  /** A span that already happened (a hook invocation, seen at its end), child of the active one. */
  recordSpan(name: string, attributes: LazyAttributes, startTime: number, endTime: number, errorType?: string): void {
    const tracer = this.tracer();
    if (!this.otel || !tracer) return;
    const span = tracer.startSpan(name, { kind: this.otel.SpanKind.INTERNAL, attributes: typeof attributes === 'function' ? attributes() : attributes, startTime });
    if (!span.isRecording()) return span.end();
    if (errorType !== undefined) new OtelSpan(span, this.otel).fail(errorType);
    span.end(endTime);
  }

  /** An event on the active span (an observe-only in-process hook, O1); its attributes are built only when it records. */
  event(name: string, attributes: LazyAttributes): void {
    if (!this.otel || !this.tracer()) return;
    const span = this.otel.trace.getActiveSpan();
    if (span?.isRecording()) span.addEvent(name, typeof attributes === 'function' ? attributes() : attributes);
  }

  /**
   * Whether a hook's span or event would be recorded here: an SDK is registered and the active context belongs
   * to a trace (a recording span, or a remote parent a span would join).
   */
  get recordsHere(): boolean {
    if (!this.otel || !this.tracer()) return false;
    const active = this.otel.trace.getActiveSpan();
    if (active?.isRecording()) return true;
    return this.inTrace;
  }

  /** Whether the active context belongs to a trace (a recording span, or a remote parent a span would join). */
  get inTrace(): boolean {
    if (!this.otel) return false;
    const spanContext = this.otel.trace.getSpanContext(this.otel.context.active());
    return spanContext !== undefined && this.otel.trace.isSpanContextValid(spanContext);
  }

  /**
   * O2: `traceparent` / `tracestate` of the active context into outgoing headers — through the host's
   * propagator, and written here from the active span when none is registered (W3C is the format).
   */
  inject(headers: Record<string, string>): void {
    if (!this.otel) return;
    const active = this.otel.context.active();
    this.otel.propagation.inject(active, headers);
    if (headers.traceparent !== undefined) return;
    const spanContext = this.otel.trace.getSpanContext(active);
    const stored = spanContext ? serialize(spanContext) : undefined;
    if (!stored) return;
    headers.traceparent = stored.traceparent;
    if (stored.tracestate !== undefined) headers.tracestate = stored.tracestate;
  }

  /** The active context's W3C trace context, to carry with work that runs later elsewhere (a queued webhook). */
  current(): StoredTraceContext | undefined {
    if (!this.otel) return undefined;
    const spanContext = this.otel.trace.getSpanContext(this.otel.context.active());
    return spanContext ? serialize(spanContext) : undefined;
  }

  /** O2: runs `work` in the context of an inbound request's `traceparent` (malformed ones are ignored). */
  withIncoming<T>(headers: Readonly<Record<string, string | string[] | undefined>>, work: () => T): T {
    if (!this.otel) return work();
    const traceparent = single(headers.traceparent)?.toLowerCase();
    if (traceparent === undefined) return work();
    const tracestate = single(headers.tracestate);
    const carrier: Record<string, string> = { traceparent, ...(tracestate !== undefined ? { tracestate } : {}) };
    let extracted: Context = this.otel.propagation.extract(this.otel.ROOT_CONTEXT, carrier);
    if (!this.otel.trace.getSpanContext(extracted)) {
      const spanContext = this.parse(carrier as unknown as StoredTraceContext);
      if (!spanContext) return work();
      extracted = this.otel.trace.setSpanContext(this.otel.ROOT_CONTEXT, spanContext);
    }
    return this.otel.context.with(extracted, work);
  }

  private parse(stored: StoredTraceContext): SpanContext | undefined {
    const match = TRACEPARENT.exec(stored.traceparent);
    if (!match || !this.otel) return undefined;
    const [, traceId, spanId, flags] = match as unknown as [string, string, string, string];
    const spanContext: SpanContext = { traceId, spanId, traceFlags: Number.parseInt(flags, 16) & 1, isRemote: true };
    if (!this.otel.trace.isSpanContextValid(spanContext)) return undefined;
    if (stored.tracestate !== undefined && stored.tracestate.length <= MAX_TRACESTATE) spanContext.traceState = this.otel.createTraceState(stored.tracestate);
    return spanContext;
  }
}

function serialize(spanContext: SpanContext): StoredTraceContext | undefined {
  if (!/^[0-9a-f]{32}$/.test(spanContext.traceId) || /^0+$/.test(spanContext.traceId) || !/^[0-9a-f]{16}$/.test(spanContext.spanId) || /^0+$/.test(spanContext.spanId)) return undefined;
  const traceparent = `00-${spanContext.traceId}-${spanContext.spanId}-${(spanContext.traceFlags & 1).toString(16).padStart(2, '0')}`;
  const tracestate = spanContext.traceState?.serialize();
  return { traceparent, ...(tracestate ? { tracestate: tracestate.slice(0, MAX_TRACESTATE) } : {}) };
}

function single(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first.length <= 1024 ? first.trim() : undefined;
}
