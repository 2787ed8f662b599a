import { buildToolCallHookContext } from '../../../src/runtime/tools/tool-context.builder.js';
import { toolCallIdempotencyKey } from '../../../src/runtime/tools/idempotency-key.js';
import { webhookIdFor } from '../../../src/webhooks/webhook-id.js';

const call = { toolCallId: 'call_0_0', assistantMessageId: 'm1', identifier: 'pay', apiName: 'charge', args: {}, callIndex: 0, stepIndex: 0, operationId: 'op-1' };

describe('F1 the idempotency key of a tool call', () => {
  it('F1: is a function of the operation and the tool call only — the same on every attempt, process and step re-run', () => {
    const key = toolCallIdempotencyKey('op-1', 'call_0_0');
    expect(key).toMatch(/^nah_[A-Za-z0-9_-]{43}$/);
    expect(toolCallIdempotencyKey('op-1', 'call_0_0')).toBe(key);
    expect(buildToolCallHookContext(call).idempotencyKey).toBe(key);
    // Another step index or call index of the same call (a re-run) keeps it.
    expect(buildToolCallHookContext({ ...call, stepIndex: 3, callIndex: 2 }).idempotencyKey).toBe(key);
  });

  it('F1: two calls never share a key, not even across operations or with ids that would concatenate alike', () => {
    const keys = [
      toolCallIdempotencyKey('op-1', 'call_0_0'),
      toolCallIdempotencyKey('op-1', 'call_0_1'),
      toolCallIdempotencyKey('op-2', 'call_0_0'),
      toolCallIdempotencyKey('op-1c', 'all_0_0'),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('F1: any model-emitted id gives a header-safe key of a fixed length', () => {
    const key = toolCallIdempotencyKey('op-1', 'weird id\r\n' + 'x'.repeat(10_000));
    expect(key).toMatch(/^nah_[A-Za-z0-9_-]{43}$/);
  });
});

describe('F3 webhook ids of retried attempts', () => {
  it('F3: each failed attempt of a call has its own webhook-id; the first keeps the id it had', () => {
    const event = { operationId: 'op-1', stepIndex: 0, toolCallId: 'call_0_0' };
    const first = webhookIdFor('h', 'onToolCallError', event);
    expect(webhookIdFor('h', 'onToolCallError', { ...event, attempt: 1 })).toBe(first);
    expect(webhookIdFor('h', 'onToolCallError', { ...event, attempt: 2 })).not.toBe(first);
  });
});
