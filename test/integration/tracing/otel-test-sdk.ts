/**
 * An OpenTelemetry SDK as a host would register it, for the tracing suites: a tracer provider with an
 * in-memory exporter, the AsyncLocalStorage context manager and the W3C propagator, set as the globals the
 * package's `@opentelemetry/api` reads. Spans are exported as they end (a simple processor).
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

export interface TestSdk {
  readonly exporter: InMemorySpanExporter;
  spans(): ReadableSpan[];
  reset(): void;
  shutdown(): Promise<void>;
}

export function installTestSdk(): TestSdk {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return {
    exporter,
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** The parent span id of a span (SDK 2: `parentSpanContext`). */
export function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

/** `00-<trace>-<span>-<flags>` → the trace id. */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  return traceparent?.split('-')[1];
}
