/**
 * Operations, caller hooks and messages: creation in one transaction, idempotency per owner, reads in
 * order, appends, and the terminal transition exactly once — on a SQLite file and on PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import type { AgentHookWebhook } from '../../../src/hooks/agent-hook.js';
import { CallerHookStore } from '../../../src/persistence/caller-hook.store.js';
import { MessageStore } from '../../../src/persistence/message.store.js';
import { OperationStore } from '../../../src/persistence/operation.store.js';
import { OperationNotFoundError } from '../../../src/persistence/persistence-errors.js';
import { driverSuites, useTestDatabase } from './test-databases.js';

const describeEachDriver = await driverSuites();

const webhook = (path: string): AgentHookWebhook => ({
  url: `https://hooks.example.com/${path}`,
  headers: { Authorization: 'Bearer ${HOOK_TOKEN}' },
  allowedEnvVars: ['HOOK_TOKEN'],
  responseHandling: 'toolCall',
  onError: 'block',
  timeout: 5,
});

describeEachDriver('operation store on %s', (driver) => {
  const db = useTestDatabase(driver);
  let operations: OperationStore;
  let hooks: CallerHookStore;
  let messages: MessageStore;

  beforeAll(() => {
    operations = new OperationStore(db.handle);
    hooks = new CallerHookStore(db.handle);
    messages = new MessageStore(db.handle);
  });

  it('creates an operation with its caller hooks and the prompt as message 1, and reads them back', async () => {
    const { operation, created } = await operations.create({
      agentId: 'assistant',
      ownerId: 'owner-1',
      parentOperationId: 'parent-1',
      prompt: 'What time is it? ✓ ünïcödé',
      runContext: { userId: 'user-1', organizationId: 'org-1', scopes: ['read', 'write'], metadata: { team: 'platform', n: 1.5 } },
      callerHooks: [
        { hookId: 'audit', type: 'afterToolCall', webhook: webhook('audit') },
        { hookId: 'policy', type: 'beforeToolCall', matcher: '^fs/', webhook: webhook('policy') },
      ],
    });
    expect(created).toBe(true);
    expect(operation).toMatchObject({
      agentId: 'assistant',
      ownerId: 'owner-1',
      parentOperationId: 'parent-1',
      status: 'running',
      stepIndex: 0,
      version: 1,
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    });
    expect(operation.id).toMatch(/^[0-9a-f-]{36}$/);

    const loaded = await operations.get(operation.id);
    expect(loaded).toEqual(operation);
    expect(loaded!.runContext).toEqual({ userId: 'user-1', organizationId: 'org-1', scopes: ['read', 'write'], metadata: { team: 'platform', n: 1.5 } });
    expect(loaded!.reason).toBeUndefined();
    expect(loaded!.completedAt).toBeUndefined();
    expect(Date.parse(loaded!.createdAt)).not.toBeNaN();

    expect(await hooks.list(operation.id)).toEqual([
      { position: 0, hookId: 'audit', type: 'afterToolCall', webhook: webhook('audit') },
      { position: 1, hookId: 'policy', type: 'beforeToolCall', matcher: '^fs/', webhook: webhook('policy') },
    ]);
    const conversation = await messages.list(operation.id);
    expect(conversation).toHaveLength(1);
    expect(conversation[0]).toMatchObject({ seq: 1, role: 'user', content: 'What time is it? ✓ ünïcödé', operationId: operation.id });
    expect(conversation[0]!.toolCalls).toBeUndefined();
  });

  it('keeps caller hooks in registration order however many there are', async () => {
    const callerHooks = Array.from({ length: 12 }, (_, i) => ({ hookId: `h${i}`, type: 'beforeStep', webhook: webhook(`h${i}`) }));
    const { operation } = await operations.create({ agentId: 'a', prompt: 'p', callerHooks });
    expect((await hooks.list(operation.id)).map((hook) => hook.hookId)).toEqual(callerHooks.map((hook) => hook.hookId));
  });

  it('answers null for an unknown operation, and empty lists', async () => {
    expect(await operations.get(randomUUID())).toBeNull();
    expect(await hooks.list(randomUUID())).toEqual([]);
    expect(await messages.list(randomUUID())).toEqual([]);
  });

  it('writes nothing when any part of the creation fails (a duplicate id)', async () => {
    const { operation } = await operations.create({ agentId: 'a', prompt: 'first' });
    await expect(
      operations.create({ id: operation.id, agentId: 'b', prompt: 'second', callerHooks: [{ hookId: 'x', type: 'beforeStep', webhook: webhook('x') }] }),
    ).rejects.toThrow();
    expect((await operations.get(operation.id))!.agentId).toBe('a');
    expect(await hooks.list(operation.id)).toEqual([]);
    expect((await messages.list(operation.id)).map((m) => m.content)).toEqual(['first']);
  });

  it('is idempotent per owner and key: a retry returns the same operation, other owners get their own', async () => {
    const key = `key-${randomUUID()}`;
    const first = await operations.create({ agentId: 'a', ownerId: 'owner-a', prompt: 'once', idempotencyKey: key });
    const retry = await operations.create({ agentId: 'a', ownerId: 'owner-a', prompt: 'once', idempotencyKey: key });
    const other = await operations.create({ agentId: 'a', ownerId: 'owner-b', prompt: 'once', idempotencyKey: key });
    expect(first.created).toBe(true);
    expect(retry).toEqual({ operation: first.operation, created: false });
    expect(other.created).toBe(true);
    expect(other.operation.id).not.toBe(first.operation.id);
    expect(first.operation.idempotencyKey).toBe(key);
    expect(await messages.list(first.operation.id)).toHaveLength(1);
    expect(await operations.findByIdempotencyKey('owner-a', key)).toEqual(first.operation);
  });

  it('is idempotent under concurrent creates with the same key: one operation, every caller sees it', async () => {
    const key = `race-${randomUUID()}`;
    const results = await Promise.all(
      Array.from({ length: 6 }, () => operations.create({ agentId: 'a', ownerId: 'racer', prompt: 'p', idempotencyKey: key })),
    );
    expect(new Set(results.map((result) => result.operation.id)).size).toBe(1);
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(await messages.list(results[0]!.operation.id)).toHaveLength(1);
  });

  it('applies a key to owner-less operations too, and never to operations without a key', async () => {
    const key = `anon-${randomUUID()}`;
    const first = await operations.create({ agentId: 'a', prompt: 'p', idempotencyKey: key });
    const again = await operations.create({ agentId: 'a', prompt: 'p', idempotencyKey: key });
    expect(again).toEqual({ operation: first.operation, created: false });
    const plain1 = await operations.create({ agentId: 'a', prompt: 'p' });
    const plain2 = await operations.create({ agentId: 'a', prompt: 'p' });
    expect(plain1.operation.id).not.toBe(plain2.operation.id);
  });

  it('appends messages after the prompt in seq order, with every field round-tripping', async () => {
    const { operation } = await operations.create({ agentId: 'a', prompt: 'go' });
    const appended = await messages.append(operation.id, [
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'call-1', identifier: 'clock', apiName: 'now', args: { tz: 'UTC', nested: { list: [1, 'two', null] } } },
          { id: 'call-2', identifier: 'fs', apiName: 'read', args: {}, invalidArgs: '{not json' },
        ],
      },
      {
        role: 'tool',
        content: 'denied by policy',
        toolCallId: 'call-1',
        identifier: 'clock',
        apiName: 'now',
        error: 'hook_denied',
        state: { hookVerdict: { outcome: 'denied', phase: 'beforeToolCall', reason: 'no' }, type: 'blocked' },
      },
    ]);
    expect(appended.map((message) => message.seq)).toEqual([2, 3]);
    const more = await messages.append(operation.id, [{ role: 'tool', content: '12:00', toolCallId: 'call-2', identifier: 'fs', apiName: 'read' }]);
    expect(more[0]!.seq).toBe(4);

    const conversation = await messages.list(operation.id);
    expect(conversation.map((message) => message.seq)).toEqual([1, 2, 3, 4]);
    expect(conversation.slice(1, 3)).toEqual(appended);
    expect(conversation[1]!.toolCalls![0]!.args).toEqual({ tz: 'UTC', nested: { list: [1, 'two', null] } });
    expect(conversation[2]).toMatchObject({ error: 'hook_denied', state: { hookVerdict: { outcome: 'denied' } } });
    expect(conversation[3]!.error).toBeUndefined();
    expect(conversation[3]!.state).toBeUndefined();
  });

  it('never gives two concurrent appends the same seq', async () => {
    const { operation } = await operations.create({ agentId: 'a', prompt: 'go' });
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => messages.append(operation.id, [{ role: 'assistant', content: `m${i}` }])),
    );
    const seqs = (await messages.list(operation.id)).map((message) => message.seq);
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('refuses to append to an unknown operation', async () => {
    await expect(messages.append(randomUUID(), [{ role: 'user', content: 'x' }])).rejects.toBeInstanceOf(OperationNotFoundError);
  });

  it('completes an operation exactly once, keeping the first reason and error', async () => {
    const { operation } = await operations.create({ agentId: 'a', prompt: 'go' });
    expect(await operations.complete(operation.id, 'error', { type: 'ModelError', message: 'upstream 500' })).toBe(true);
    expect(await operations.complete(operation.id, 'done')).toBe(false);
    const completed = await operations.get(operation.id);
    expect(completed).toMatchObject({ status: 'completed', reason: 'error', errorType: 'ModelError', errorMessage: 'upstream 500', version: 2 });
    expect(completed!.completedAt).toBeDefined();
    expect(await operations.complete(randomUUID(), 'done')).toBe(false);
  });

  it('lets exactly one of many concurrent terminal transitions win', async () => {
    const { operation } = await operations.create({ agentId: 'a', prompt: 'go' });
    const reasons = ['done', 'error', 'interrupted', 'max_steps', 'cost_limit', 'done', 'interrupted', 'error'] as const;
    const wins = await Promise.all(reasons.map((reason) => operations.complete(operation.id, reason)));
    expect(wins.filter(Boolean)).toHaveLength(1);
    const winner = reasons[wins.indexOf(true)];
    expect((await operations.get(operation.id))!.reason).toBe(winner);
  });

  /** Which of `ids` a reconciler would find owed (claims are held for an hour, so later claims see none). */
  const owedAmong = async (ids: readonly string[]) => (await operations.claimOwedTerminalHooks('reconciler', 3_600_000, 1_000)).map((row) => row.id).filter((id) => ids.includes(id));

  it('G2: a transition with nothing owed records the terminal sequence done (no hold, nothing for a reconciler); a sub-agent keeps it held for its bridge', async () => {
    const { operation: alone } = await operations.create({ agentId: 'assistant', prompt: 'x' });
    const { operation: child } = await operations.create({ agentId: 'assistant', prompt: 'x', parentOperationId: 'parent-1', parentToolCallId: 'call-1' });
    const { operation: observed } = await operations.create({ agentId: 'assistant', prompt: 'x' });
    const hold = { owner: 'me', ms: -1 }; // lapsed at once: whatever stays owed is claimable now
    expect(await operations.complete(alone.id, 'done', undefined, { ...hold, nothingOwed: true })).toBe(true);
    expect(await operations.complete(child.id, 'done', undefined, { ...hold, nothingOwed: true })).toBe(true);
    expect(await operations.complete(observed.id, 'done', undefined, hold)).toBe(true);

    expect(await operations.get(alone.id)).toMatchObject({ status: 'completed', reason: 'done' });
    expect((await operations.get(alone.id))!.leaseOwner).toBeUndefined();
    expect((await operations.get(child.id))!.leaseOwner).toBe('me');
    const owed = await owedAmong([alone.id, child.id, observed.id]);
    expect(owed.sort()).toEqual([child.id, observed.id].sort());
    // Marked done the usual way, the others are not owed any more either.
    await operations.markTerminalHooksDone(child.id);
    await operations.markTerminalHooksDone(observed.id);
    const { operation: later } = await operations.create({ agentId: 'assistant', prompt: 'x' });
    expect(await operations.complete(later.id, 'done', undefined, hold)).toBe(true);
    expect(await owedAmong([alone.id, child.id, observed.id, later.id])).toEqual([later.id]);
  });
});
