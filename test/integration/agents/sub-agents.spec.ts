/**
 * Sub-agents (SPEC A3, V1, P4, P5): `agents/call` fires beforeCallAgent → a child operation with its own
 * threadId → afterCallAgent on the parent; the child reports its own onComplete; only the completion bridge
 * publishes the child's answer into the parent, through the parent's after-controls.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { bootRuntime, eventOf, pointsOf, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { startReceiver, type LoopbackReceiver } from '../../unit/webhooks/loopback-receiver.js';
import { HUMAN_LOOP_CONFIG, HumanLoopTools, untilOperation, waiting } from '../human-loop/human-loop-kit.js';
import { MAX_SUB_AGENT_DEPTH } from '../../../src/runtime/operation-start.js';
import { TOOL_CATALOG, type ToolCatalog } from '../../../src/runtime/tools/tool-types.js';
import { until } from '../../support/eventually.js';

let app: RuntimeApp;
let receiver: LoopbackReceiver;
const verdicts: string[] = [];

beforeEach(async () => {
  verdicts.length = 0;
  receiver = await startReceiver({
    '/policy': (req, res) => {
      req.on('end', () => {
        const body = verdicts.shift();
        if (body === undefined) res.writeHead(204).end();
        else res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      });
    },
  });
  app = await bootRuntime({ observe: true, config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools], webhooks: { allowNetworks: ['127.0.0.1/32'] } });
});
afterEach(async () => {
  await app.close();
  await receiver.close();
});

const CALL_POINTS = ['beforeCallAgent', 'afterCallAgent', 'onCallAgentError', 'afterToolCall', 'onComplete'] as const;

describe('sub-agents', () => {
  it('V1, P5: beforeCallAgent → child with parentOperationId and threadId → afterCallAgent on the parent; the child completes and the bridge publishes its answer', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'manager', prompt: 'delegate' });
    const result = await within(done, 'the parent');
    expect(result).toMatchObject({ reason: 'done', content: 'manager got: It is 2026-11-30T12:00:00Z (what time is it?)' });
    const after = eventOf(app.events, operationId, 'afterCallAgent')?.payload as { subOperationId: string; threadId: string };
    expect(eventOf(app.events, operationId, 'beforeCallAgent')?.payload).toMatchObject({ operationId, agentId: 'helper', parentAgentId: 'manager', instruction: 'what time is it?' });
    expect(after).toMatchObject({ operationId, agentId: 'helper', success: true, threadId: expect.any(String) });
    const child = await app.store.getOperation(after.subOperationId);
    expect(child).toMatchObject({ parentOperationId: operationId, threadId: after.threadId, agentId: 'helper', status: 'completed', reason: 'done' });
    // The child reports its own onComplete; its events carry the parent and the thread.
    expect(eventOf(app.events, after.subOperationId, 'onComplete')?.payload).toMatchObject({ parentOperationId: operationId, threadId: after.threadId, reason: 'done' });
    expect(pointsOf(app.events, operationId, [...CALL_POINTS])).toEqual(['beforeCallAgent', 'afterCallAgent', 'afterToolCall', 'onComplete']);
    const tool = (await app.store.messages(operationId)).find((m) => m.role === 'tool');
    expect(tool).toMatchObject({ identifier: 'agents', apiName: 'call', content: 'It is 2026-11-30T12:00:00Z (what time is it?)' });
  });

  it('P5: the parent after-control gates the bridge: a denied child answer never reaches the parent conversation', async () => {
    verdicts.push(JSON.stringify({ decision: 'deny', reason: 'sub-agent answers are reviewed' }));
    const hooks = [{ id: 'gate', type: 'afterToolCall' as const, matcher: '^agents/call$', webhook: { url: receiver.url('/policy'), responseHandling: 'toolCall' as const, onError: 'block' as const } }];
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'manager', prompt: 'delegate', hooks });
    await within(done, 'the parent');
    const messages = await app.store.messages(operationId);
    expect(messages.find((m) => m.role === 'tool')).toMatchObject({ content: 'sub-agent answers are reviewed', error: 'hook_denied' });
    expect(JSON.stringify(messages)).not.toContain('It is 2026');
    // The control saw the child's answer before anything was written.
    expect(receiver.requests.filter((r) => r.path === '/policy').some((r) => r.body.includes('It is 2026'))).toBe(true);
  });

  it('P4: group members where one fails to start: onCallAgentError, its error result goes through the hooks then the write; the parent resumes when both are final', async () => {
    const hooks = [{ id: 'audit', type: 'afterToolCall' as const, webhook: { url: receiver.url('/policy'), responseHandling: 'toolCall' as const } }];
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'grouper', prompt: 'fan out', hooks });
    const result = await within(done, 'the parent');
    expect(result.reason).toBe('done');
    expect(pointsOf(app.events, operationId, ['beforeCallAgent', 'afterCallAgent', 'onCallAgentError'])).toEqual([
      'beforeCallAgent',
      'afterCallAgent',
      'beforeCallAgent',
      'onCallAgentError',
    ]);
    expect(eventOf(app.events, operationId, 'onCallAgentError')?.payload).toMatchObject({ agentId: 'ghost', error: { type: 'UnknownAgentError', message: 'unknown agent "ghost"' } });
    const tools = (await app.store.messages(operationId)).filter((m) => m.role === 'tool');
    expect(tools.map((m) => m.content).sort()).toEqual(['Error: unknown agent "ghost"', 'It is 2026-11-30T12:00:00Z (time please)'].sort());
    // Both results passed the parent's after-hook before being written (hooks, then write).
    const audited = receiver.requests.filter((r) => r.path === '/policy').map((r) => r.body);
    expect(audited.some((b) => b.includes('unknown agent'))).toBe(true);
    expect(audited.some((b) => b.includes('time please'))).toBe(true);
  });

  it('an agent that keeps delegating to itself stops at the nesting limit; every level still answers', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'recursive', prompt: 'go' });
    const result = await within(done, 'the top operation', 20_000);
    expect(result.reason).toBe('done');
    expect(result.content).toBe(`${'level('.repeat(MAX_SUB_AGENT_DEPTH)}Error: sub-agents nest at most ${MAX_SUB_AGENT_DEPTH} operations deep${')'.repeat(MAX_SUB_AGENT_DEPTH)}`);
    expect(eventOf(app.events, operationId, 'afterCallAgent')?.payload).toMatchObject({ success: true });
  });

  it('the built-in is offered only to agents whose tools name it: `*` does not hand out sub-agents', async () => {
    const catalog = app.moduleRef.get<ToolCatalog>(TOOL_CATALOG);
    const names = (patterns: string[]) => catalog.toolsFor(patterns).then((tools) => tools.map((t) => `${t.identifier}/${t.apiName}`));
    expect(await names(['*'])).not.toContain('agents/call');
    expect(await names(['agents/*'])).toEqual(['agents/call']);
    expect(await names(['agents/call'])).toEqual(['agents/call']);
  });

  it('P5: after an approval resume of the child, only the bridge publishes into the parent (no pre-filled summary meanwhile)', async () => {
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'boss', prompt: 'x' });
    const childId = (await until(
      () => (eventOf(app.events, operationId, 'afterCallAgent')?.payload as { subOperationId?: string } | undefined)?.subOperationId,
      (id) => id !== undefined,
      'the child start',
    ))!;
    await untilOperation(app.store, childId, waiting, 'the child');
    // While the child waits for its human, the parent waits too and holds no result for the call.
    expect((await app.store.getOperation(operationId))?.status).toBe('waiting');
    expect((await app.store.messages(operationId)).filter((m) => m.role === 'tool')).toEqual([]);
    const [pending] = await app.store.interventions(childId);
    await app.runtime.approve(childId, pending!.toolCallId);
    expect(await within(done, 'the parent')).toMatchObject({ reason: 'done', content: 'boss got: wrote: written /tmp/report.txt' });
    expect((await app.store.messages(operationId)).filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['wrote: written /tmp/report.txt']);
  });
});
