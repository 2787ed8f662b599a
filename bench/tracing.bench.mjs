// What our tracing layer costs on top of the OpenTelemetry SDK itself (issue 16): the span tree of a 10-step
// run (`invoke_agent`, 10 × `chat` with usage set after the answer, 9 × `execute_tool` with the outcome set
// after the call), each span's work one `await`, built three ways in one process:
// - ours: `AgentTracer` (startOperation / within / span, lazy attributes, the stored context);
// - the SDK's own API: `tracer.startActiveSpan` with the same names, kinds and attributes, the work chained
//   the same way (a `.then` that sets the late attributes and ends the span);
// - none: the same awaits without spans (the floor both are measured above).
// SDK as bench:runtime registers it: BasicTracerProvider, BatchSpanProcessor, in-memory exporter, and the
// AsyncLocalStorage context manager. Rounds interleave the three; a round's batch is flushed inside it.
//   npm run bench:tracing   → µs per span for both, and last line
//   `RESULT tracing ours-vs-sdk-api=<ratio of the span cost above none> sdk-api-us-per-span=<n>`
// Span creation only (per-step segments and hook spans are not in the tree). Read with bench:runtime (which
// prints what a span costs inside a real run): ours − the SDK's is what our layer adds to each span.
import * as otel from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { AgentTracer } from '../dist/tracing/agent-tracer.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const TREES = Number(process.env.BENCH_TREES ?? 2_000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const SPANS_PER_TREE = 20;

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: 100_000, maxExportBatchSize: 2_048 })] });
otel.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
otel.trace.setGlobalTracerProvider(provider);

const ours = new AgentTracer(otel, { captureContent: false });
const sdk = otel.trace.getTracer('nest-agent-hooks');
const { SpanKind } = otel;

const work = async () => {
  await null;
  return 'ok';
};
const chatAttributes = (operationId) => ({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'ten', 'gen_ai.agent.name': 'bench', 'gen_ai.conversation.id': operationId, 'nest_agent_hooks.operation.id': operationId, 'gen_ai.provider.name': 'scripted' });
const usage = { 'gen_ai.usage.input_tokens': 12, 'gen_ai.usage.output_tokens': 3, 'gen_ai.response.finish_reasons': ['tool_calls'] };
const toolAttributes = (operationId, i) => ({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'bench/work', 'gen_ai.tool.call.id': `call_${i}`, 'gen_ai.tool.type': 'function', 'nest_agent_hooks.operation.id': operationId });
const outcome = { 'nest_agent_hooks.tool.outcome': 'ok' };

async function viaOurs(operationId) {
  const { span } = ours.startOperation('bench', operationId);
  await ours.within(span, async () => {
    for (let i = 0; i < 10; i++) {
      await ours.span('chat ten', 'client', () => chatAttributes(operationId), (s) => work().then((v) => (s.set(usage), v)));
      if (i < 9) await ours.span('execute_tool bench/work', 'internal', () => toolAttributes(operationId, i), (s) => work().then((v) => (s.set(outcome), v)));
    }
  });
  span.end();
}

/** The work's promise chained as ours chains it (no async frame around it), so only the span API differs. */
function settleAndEnd(span, attributes) {
  return work().then(
    (value) => {
      span.setAttributes(attributes);
      span.end();
      return value;
    },
    (error) => {
      span.end();
      throw error;
    },
  );
}

async function viaSdk(operationId) {
  await sdk.startActiveSpan('invoke_agent bench', { kind: SpanKind.INTERNAL, attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'bench', 'gen_ai.conversation.id': operationId, 'nest_agent_hooks.operation.id': operationId } }, async (root) => {
    try {
      for (let i = 0; i < 10; i++) {
        await sdk.startActiveSpan('chat ten', { kind: SpanKind.CLIENT, attributes: chatAttributes(operationId) }, (s) => settleAndEnd(s, usage));
        if (i < 9) await sdk.startActiveSpan('execute_tool bench/work', { kind: SpanKind.INTERNAL, attributes: toolAttributes(operationId, i) }, (s) => settleAndEnd(s, outcome));
      }
    } finally {
      root.end();
    }
  });
}

async function viaNone() {
  for (let i = 0; i < 10; i++) {
    await work();
    if (i < 9) await work();
  }
}

const variants = { ours: viaOurs, sdk: viaSdk, none: viaNone };

/** CPU µs per tree of one variant, its batch exported inside the measurement. */
async function measure(name) {
  const build = variants[name];
  // The previous variant's spans are garbage now: collected before, not during, this one (npm runs it with --expose-gc).
  globalThis.gc?.();
  await new Promise((resolve) => setTimeout(resolve, 10));
  const started = process.cpuUsage();
  for (let i = 0; i < TREES; i++) await build(`op-${i}`);
  await provider.forceFlush();
  const used = process.cpuUsage(started);
  const finished = exporter.getFinishedSpans();
  exporter.reset();
  if (name !== 'none') {
    if (finished.length !== TREES * SPANS_PER_TREE) throw new Error(`${name}: expected ${TREES * SPANS_PER_TREE} spans, saw ${finished.length}`);
    // The same tree both ways: every span but the roots is a child of its tree's invoke_agent span.
    const roots = new Map(finished.filter((span) => span.name.startsWith('invoke_agent')).map((span) => [span.spanContext().traceId, span.spanContext().spanId]));
    const misplaced = finished.filter((span) => !span.name.startsWith('invoke_agent') && span.parentSpanContext?.spanId !== roots.get(span.spanContext().traceId));
    if (roots.size !== TREES || misplaced.length > 0) throw new Error(`${name}: ${roots.size} trees, ${misplaced.length} spans outside their tree`);
  }
  return (used.user + used.system) / TREES;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const names = Object.keys(variants);
const perRound = { ours: [], sdk: [], ratio: [] };
for (let round = 0; round < WARMUP + ROUNDS; round++) {
  const us = {};
  // The order rotates per round: no variant always runs first (on a fresh heap) or last.
  for (let i = 0; i < names.length; i++) {
    const name = names[(i + round) % names.length];
    us[name] = await measure(name);
  }
  if (round < WARMUP) continue;
  const oursPerSpan = (us.ours - us.none) / SPANS_PER_TREE;
  const sdkPerSpan = (us.sdk - us.none) / SPANS_PER_TREE;
  perRound.ours.push(oursPerSpan);
  perRound.sdk.push(sdkPerSpan);
  perRound.ratio.push(oursPerSpan / sdkPerSpan);
}
await provider.shutdown();

console.log(`${ROUNDS} rounds × ${TREES} span trees of ${SPANS_PER_TREE} spans (a 10-step run), CPU above the same awaits without spans, median per round`);
console.log(`  ours (AgentTracer) ${median(perRound.ours).toFixed(2)} µs per span   the SDK's own startActiveSpan ${median(perRound.sdk).toFixed(2)} µs per span`);
console.log(`  per-round ratios: min ${Math.min(...perRound.ratio).toFixed(3)}  max ${Math.max(...perRound.ratio).toFixed(3)}`);
console.log(`RESULT tracing ours-vs-sdk-api=${median(perRound.ratio).toFixed(2)} sdk-api-us-per-span=${median(perRound.sdk).toFixed(2)}`);
