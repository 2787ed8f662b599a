/**
 * For the render measurements only: the page's API answered in the browser (Playwright routes) with
 * `operations` list items and one operation (`perf-operation`) of `timelineRows` hook rows, so the figure
 * is the console's rendering, not the time it takes a server to run a thousand operations.
 */
import type { Page } from 'playwright-core';

const OUTCOMES = ['ok', 'allowed', 'denied', 'mocked', 'notification', 'error'] as const;
const POINTS = ['before_tool_call', 'beforeToolCall', 'transform_tool_result', 'afterToolCall', 'after_tool_call'] as const;

export async function fakeOperationsApi(page: Page, sizes: { operations: number; timelineRows: number }): Promise<void> {
  const start = Date.parse('2026-12-01T12:00:00.000Z');
  const items = Array.from({ length: sizes.operations }, (_, index) => ({
    operationId: `${(0x9e3779b1 * (index + 1) >>> 0).toString(16).padStart(8, '0')}-0000-4000-8000-${String(index).padStart(12, '0')}`,
    agentId: `agent-${index % 7}`,
    status: 'completed',
    reason: index % 11 === 0 ? 'interrupted' : 'done',
    createdAt: new Date(start - index * 60_000).toISOString(),
    updatedAt: new Date(start - index * 60_000 + 1_500 + (index % 13) * 100).toISOString(),
    steps: 1 + (index % 5),
    usage: { inputTokens: 100 + index, outputTokens: 20 + (index % 50), costUsd: 0.0001 * index },
  }));
  // 100 tool calls of 5 hook rows each, 2 calls a step.
  const steps = Math.ceil(sizes.timelineRows / POINTS.length / 2);
  const timeline = Array.from({ length: sizes.timelineRows }, (_, index) => ({
    seq: index + 1,
    at: new Date(start + index * 3).toISOString(),
    point: POINTS[index % POINTS.length],
    hookId: `hooks.h${index % POINTS.length}`,
    source: 'config',
    outcome: OUTCOMES[index % OUTCOMES.length],
    ...(index % OUTCOMES.length === 5 ? { errorCode: 'timeout' } : {}),
    latencyMs: 0.5 + (index % 9),
  }));
  const messages: Record<string, string>[] = [{ id: 'm0', role: 'user', content: 'Measure me.' }];
  for (let step = 0; step < steps; step++) {
    messages.push({ id: `a${step}`, role: 'assistant', content: '' });
    for (let call = 0; call < 2; call++) messages.push({ id: `t${step}-${call}`, role: 'tool', content: `result ${step}.${call}`, toolCallId: `call_${step}_${call}`, identifier: 'kb', apiName: 'search' });
  }
  messages.push({ id: 'end', role: 'assistant', content: 'Done.' });
  const view = { operationId: 'perf-operation', agentId: 'agent-0', status: 'completed', reason: 'done', usage: { inputTokens: 5_000, outputTokens: 900, costUsd: 0.12 } };
  const events = [
    ...messages.map((message, index) => `id: ${index + 1}\nevent: message\ndata: ${JSON.stringify(message)}\n\n`),
    `event: status\ndata: ${JSON.stringify(view)}\n\n`,
  ].join('');

  await page.route(/\/v1\/operations(\?.*)?$/, (route) => route.fulfill({ json: { items } }));
  await page.route(/\/v1\/operations\/perf-operation$/, (route) => route.fulfill({ json: view }));
  await page.route(/\/v1\/operations\/perf-operation\/timeline$/, (route) => route.fulfill({ json: { items: timeline } }));
  await page.route(/\/v1\/operations\/perf-operation\/events$/, (route) => route.fulfill({ status: 200, contentType: 'text/event-stream', body: events }));
}
