/**
 * W5 (LobeHub parity): a tool event without a string `identifier` and `apiName` never matches a hook that
 * has a matcher — no `"undefined/readFile"` string is ever tested — while hooks without a matcher still
 * fire. Every dispatch entry point that filters by matcher is covered, and environment hooks too.
 */
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { OnHook, type AgentHook, type BeforeToolCallObservationEvent, type OnToolCallErrorEvent } from '../../../src/index.js';
import { afterEvent, beforeEvent, boot, captureLogs, envHook, TestEnvironment, type Booted } from './agent-test-kit.js';

let booted: Booted;
let environment: TestEnvironment;
let calls: string[];

function hook(id: string, type: AgentHook['type'], matcher?: string): AgentHook {
  return { id, type, handler: () => void calls.push(id), ...(matcher !== undefined ? { matcher } : {}) };
}

/** The same event with `identifier` / `apiName` removed or replaced by a non-string. */
function without<T extends object>(event: T, fields: Partial<Record<'identifier' | 'apiName', unknown>>): T {
  const copy = { ...event } as Record<string, unknown>;
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) delete copy[key];
    else copy[key] = value;
  }
  return copy as T;
}

/** Matchers that an `"undefined/…"`, `"42/…"` or `"null/…"` string would satisfy. */
const GREEDY = ['^fs/read', 'readFile', 'undefined', '/', '.'];
const BROKEN: Array<[string, Partial<Record<'identifier' | 'apiName', unknown>>]> = [
  ['no identifier', { identifier: undefined }],
  ['no apiName', { apiName: undefined }],
  ['neither', { identifier: undefined, apiName: undefined }],
  ['a numeric identifier', { identifier: 42 }],
  ['a null apiName', { apiName: null }],
];

beforeEach(async () => {
  calls = [];
  captureLogs();
  environment = new TestEnvironment();
  booted = await boot({ environment });
});

afterEach(async () => {
  await booted.moduleRef.close();
  jest.restoreAllMocks();
});

describe('W5 a tool event without a string identifier and apiName', () => {
  it.each(BROKEN)("W5: dispatch('afterToolCall') with %s runs no matcher hook, only hooks without one", async (_label, fields) => {
    booted.registry.register('op-1', [...GREEDY.map((m, i) => hook(`m${i}`, 'afterToolCall', m)), hook('open', 'afterToolCall'), hook('star', 'afterToolCall', '*')]);
    await booted.dispatcher.dispatch('afterToolCall', without(afterEvent({ operationId: 'op-1', identifier: 'fs', apiName: 'readFile' }), fields));
    expect(calls).toEqual(['open', 'star']);
  });

  it.each(BROKEN)('W5: dispatchBeforeToolCall with %s never builds "undefined/readFile"', async (_label, fields) => {
    booted.registry.register('op-1', [...GREEDY.map((m, i) => hook(`m${i}`, 'beforeToolCall', m)), hook('open', 'beforeToolCall')]);
    const event = without(beforeEvent({ operationId: 'op-1', identifier: 'fs', apiName: 'readFile' }), fields);
    await booted.dispatcher.dispatchBeforeToolCall(event as BeforeToolCallObservationEvent);
    expect(calls).toEqual(['open']);
  });

  it('W5: gateToolCall and gateToolResult skip matcher controls and still ask the others', async () => {
    const deny = jest.fn(() => ({ decision: 'deny', reason: 'matched' }));
    booted.registry.register('op-1', [
      { id: 'before-policy', type: 'beforeToolCall', matcher: 'undefined', onError: 'block', handler: deny },
      { id: 'after-policy', type: 'afterToolCall', matcher: '^fs/', onError: 'block', handler: deny },
      hook('before-open', 'beforeToolCall'),
      hook('after-open', 'afterToolCall'),
    ]);
    const gate = await booted.dispatcher.gateToolCall(without(beforeEvent({ operationId: 'op-1' }), { identifier: undefined }));
    const verdict = await booted.dispatcher.gateToolResult(without(afterEvent({ operationId: 'op-1' }), { apiName: 7 }));
    expect(gate.verdict).toEqual({ outcome: 'allowed' });
    expect(verdict).toEqual({ outcome: 'allowed' });
    expect(deny).not.toHaveBeenCalled();
    expect(calls).toEqual(['before-open', 'after-open']);
  });

  it('W5: onToolCallError, environment hooks and @OnHook matchers follow the same rule', async () => {
    @Injectable()
    class Audit {
      @OnHook('onToolCallError', { matcher: '^fs/' }) matched() {
        calls.push('decorator-matched');
      }
      @OnHook('onToolCallError') open() {
        calls.push('decorator-open');
      }
    }
    await booted.moduleRef.close();
    booted = await boot({ environment, providers: [Audit] });
    environment.hooks = [
      envHook({ id: 'env-fs', point: 'onToolCallError', matcher: '^fs/', handler: () => void calls.push('env-fs') }),
      envHook({ id: 'env-open', point: 'onToolCallError', handler: () => void calls.push('env-open') }),
    ];
    booted.registry.register('op-1', [hook('caller-fs', 'onToolCallError', '^fs/'), hook('caller-open', 'onToolCallError')]);
    const error = { ...beforeEvent({ operationId: 'op-1' }), type: 'onToolCallError', error: { type: 'Error', message: 'x' } } as unknown as OnToolCallErrorEvent;
    await booted.dispatcher.dispatch('onToolCallError', without(error, { identifier: undefined }));
    expect(calls).toEqual(['decorator-open', 'caller-open', 'env-open']);

    calls = [];
    await booted.dispatcher.dispatch('onToolCallError', error);
    expect(calls).toEqual(['decorator-matched', 'decorator-open', 'caller-fs', 'caller-open', 'env-fs', 'env-open']);
  });
});
