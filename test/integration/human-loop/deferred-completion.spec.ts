/**
 * Deferred tools (DESIGN §8; SPEC L4, P3, P4): a call for an outside executor leaves an empty placeholder
 * and the operation waits; `completeDeferred` runs the after-hooks, then writes with a compare-and-set on
 * the placeholder — the first final write wins, duplicates change nothing, denials included.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { bootRuntime, eventOf, pointsOf, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { HUMAN_LOOP_CONFIG, HumanLoopTools, untilOperation, waiting } from './human-loop-kit.js';
import { AlreadyCompletedError, UnknownInterventionError } from '../../../src/index.js';

let app: RuntimeApp;
let receiver: Server;
let receiverUrl: string;
let decisions: Array<{ decision: string; reason?: string }>;
const seen: unknown[] = [];

beforeEach(async () => {
  decisions = [];
  seen.length = 0;
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      seen.push(JSON.parse(body));
      const decision = decisions.shift();
      if (!decision) {
        res.writeHead(204).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(decision));
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  app = await bootRuntime({ observe: true, config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools], webhooks: { allowNetworks: ['127.0.0.1/32'] } });
});
afterEach(async () => {
  await app.close();
  await new Promise((resolve) => receiver.close(resolve));
});

const afterControl = () => ({ id: 'result-policy', type: 'afterToolCall' as const, webhook: { url: receiverUrl, responseHandling: 'toolCall' as const, onError: 'block' as const } });

describe('deferred tools', () => {
  it('L4: the call is handed out (placeholder empty, operation waiting); completeDeferred publishes once and the run goes on', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'browser', prompt: 'open it' });
    await untilOperation(app.store, operationId, waiting);
    const [item] = await app.store.interventions(operationId);
    expect(item).toMatchObject({ kind: 'deferred', status: 'pending', identifier: 'browser', apiName: 'open', args: { url: 'https://example.com' } });
    expect(await app.store.placeholderState(operationId, item!.toolCallId)).toBe('empty');
    // The before-chain ran at hand-out; nothing was published yet (P1).
    expect(pointsOf(app.events, operationId, ['before_tool_call', 'beforeToolCall', 'afterToolCall'])).toEqual(['before_tool_call', 'beforeToolCall']);
    expect((await app.store.messages(operationId)).filter((m) => m.role === 'tool')).toEqual([]);

    await expect(app.runtime.completeDeferred(operationId, item!.toolCallId, { content: '<html>hi</html>', success: true })).resolves.toEqual({ published: true });
    const result = await within(done, 'done');
    expect(result).toMatchObject({ reason: 'done', content: 'page: <html>hi</html>' });
    expect(await app.store.placeholderState(operationId, item!.toolCallId)).toBe('final');
    expect(eventOf(app.events, operationId, 'afterToolCall')?.payload).toMatchObject({ result: { content: '<html>hi</html>', success: true }, mocked: false });
    await expect(app.runtime.completeDeferred(operationId, item!.toolCallId, { content: 'late', success: true })).rejects.toBeInstanceOf(AlreadyCompletedError);
    expect((await app.store.messages(operationId)).filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['<html>hi</html>']);
  });

  it('L4, P4: the after-controls of the caller hooks run before the write; a denial is the first final result and a later allowed callback changes nothing', async () => {
    decisions.push({ decision: 'deny', reason: 'page holds secrets' });
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'browser', prompt: 'x', hooks: [afterControl()] });
    await untilOperation(app.store, operationId, waiting);
    const [item] = await app.store.interventions(operationId);
    await app.runtime.completeDeferred(operationId, item!.toolCallId, { content: 'SECRET PAGE', success: true });
    // The control saw the full result before anything was written.
    expect(seen).toEqual([expect.objectContaining({ hookType: 'afterToolCall', result: expect.objectContaining({ content: 'SECRET PAGE' }) })]);
    decisions.push({ decision: 'allow' });
    await expect(app.runtime.completeDeferred(operationId, item!.toolCallId, { content: 'SECRET PAGE v2', success: true })).rejects.toBeInstanceOf(AlreadyCompletedError);
    await within(done, 'done');
    const tools = (await app.store.messages(operationId)).filter((m) => m.role === 'tool');
    expect(tools).toEqual([expect.objectContaining({ content: 'page holds secrets', error: 'hook_denied', state: { hookVerdict: expect.objectContaining({ outcome: 'denied', phase: 'afterToolCall' }) } })]);
    expect(JSON.stringify(await app.store.messages(operationId))).not.toContain('SECRET PAGE');
  });

  it('L4: a completion for an unknown call is a clear error', async () => {
    const { operationId } = await app.runtime.execAgent({ agentId: 'browser', prompt: 'x' });
    await untilOperation(app.store, operationId, waiting);
    await expect(app.runtime.completeDeferred(operationId, 'call_unknown', { content: 'x' })).rejects.toBeInstanceOf(UnknownInterventionError);
    await app.runtime.cancel(operationId);
  });

  it('L4: concurrent completions of one call: exactly one winner, one published message', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'browser', prompt: 'x' });
    await untilOperation(app.store, operationId, waiting);
    const [item] = await app.store.interventions(operationId);
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => app.runtime.completeDeferred(operationId, item!.toolCallId, { content: `result ${i}`, success: true })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(AlreadyCompletedError);
    await within(done, 'done');
    expect((await app.store.messages(operationId)).filter((m) => m.role === 'tool')).toHaveLength(1);
  });
});
