/**
 * B1–B4: webhook payloads — eventFields projection, hook identity, body merged last, server-only fields
 * removed, notification results slimmed, userEmail resolved through the directory with a shared, bounded,
 * expiring cache and per-waiter cancellation.
 */
import { getEventListeners } from 'node:events';
import { jest } from '@jest/globals';
import type { AgentHookWebhook } from '../../../src/hooks/agent-hook.js';
import { redactResultForEvents, WebhookPayloadBuilder, type UserDirectory } from '../../../src/webhooks/payload-builder.js';

const URL_OK = 'https://receiver.example.com/hooks';

function afterToolCallEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'evt-1',
    type: 'afterToolCall',
    operationId: 'op-1',
    agentId: 'assistant',
    userId: 'user-1',
    stepIndex: 2,
    timestamp: '2026-01-01T00:00:00.000Z',
    toolCallId: 'call-1',
    identifier: 'fs',
    apiName: 'readFile',
    args: { path: '/tmp/a' },
    result: { content: 'short text', success: true, data: { raw: 'x'.repeat(1000) }, state: { type: 'done' } },
    mocked: false,
    finalState: { internal: true },
    ...overrides,
  };
}

function hookWith(webhook: Partial<AgentHookWebhook> = {}, point = 'afterToolCall') {
  return { id: 'hook-1', point, webhook: { url: URL_OK, ...webhook } };
}

const NOTIFY = { control: false } as const;
const CONTROL = { control: true } as const;

/** A directory backed by a map, counting calls per user. */
function mapDirectory(emails: Record<string, string | undefined>) {
  const calls: string[] = [];
  const directory: UserDirectory = {
    findEmail: async (userId) => {
      calls.push(userId);
      return emails[userId];
    },
  };
  return { directory, calls };
}

/** A directory whose look-ups wait until the test settles them. */
function deferredDirectory() {
  const pending = new Map<string, { resolve: (email: string | undefined) => void; reject: (error: Error) => void }>();
  const calls: string[] = [];
  const directory: UserDirectory = {
    findEmail: (userId) =>
      new Promise<string | undefined>((resolve, reject) => {
        calls.push(userId);
        pending.set(userId, { resolve, reject });
      }),
  };
  return { directory, calls, pending };
}

/** Lets queued promise callbacks run. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('B1 projection, hook identity, body', () => {
  it('B1: without eventFields every data field is sent, plus hookId and hookType', async () => {
    const event = afterToolCallEvent();
    const payload = await new WebhookPayloadBuilder().build(event, hookWith(), CONTROL);
    const { finalState: _finalState, ...dataFields } = event;
    expect(payload).toEqual({ ...dataFields, hookId: 'hook-1', hookType: 'afterToolCall' });
  });

  it('B1: eventFields selects fields; unknown fields are skipped', async () => {
    const payload = await new WebhookPayloadBuilder().build(afterToolCallEvent(), hookWith({ eventFields: ['operationId', 'toolCallId', 'noSuchField'] }), NOTIFY);
    expect(payload).toEqual({ operationId: 'op-1', toolCallId: 'call-1', hookId: 'hook-1', hookType: 'afterToolCall' });
  });

  it('B1: empty eventFields send only the hook identity and the body', async () => {
    const payload = await new WebhookPayloadBuilder().build(afterToolCallEvent(), hookWith({ eventFields: [], body: { team: 'platform' } }), NOTIFY);
    expect(payload).toEqual({ hookId: 'hook-1', hookType: 'afterToolCall', team: 'platform' });
  });

  it('B1: body is merged last and wins on overlapping keys (also over hookId)', async () => {
    const payload = await new WebhookPayloadBuilder().build(
      afterToolCallEvent(),
      hookWith({ eventFields: ['operationId', 'stepIndex'], body: { operationId: 'from-body', hookId: 'renamed', extra: [1] } }),
      NOTIFY,
    );
    expect(payload).toEqual({ operationId: 'from-body', stepIndex: 2, hookId: 'renamed', hookType: 'afterToolCall', extra: [1] });
  });

  it('B1: without eventFields too, the body is merged last and wins on overlapping keys, each key in its first place', async () => {
    const event = afterToolCallEvent();
    const payload = await new WebhookPayloadBuilder().build(event, hookWith({ body: { operationId: 'from-body', hookId: 'renamed', extra: [1] } }), CONTROL);
    const { finalState: _finalState, ...dataFields } = event;
    expect(payload).toEqual({ ...dataFields, operationId: 'from-body', hookId: 'renamed', hookType: 'afterToolCall', extra: [1] });
    expect(Object.keys(payload!)).toEqual([...Object.keys(dataFields), 'hookId', 'hookType', 'extra']);
  });

  it('B1: a `__proto__` key of a body (parsed from JSON) is sent as a field, never set as the prototype', async () => {
    const body = JSON.parse('{"__proto__": {"polluted": true}, "team": "platform"}') as Record<string, unknown>;
    for (const eventFields of [undefined, ['operationId']]) {
      const payload = (await new WebhookPayloadBuilder().build(afterToolCallEvent(), hookWith({ body, ...(eventFields ? { eventFields } : {}) }), NOTIFY))!;
      expect(Object.getPrototypeOf(payload)).toBe(Object.prototype);
      expect((payload as { polluted?: unknown }).polluted).toBeUndefined();
      expect(JSON.parse(JSON.stringify(payload))).toMatchObject({ team: 'platform' });
      expect(JSON.stringify(payload)).toContain('"__proto__":{"polluted":true}');
    }
  });

  it('M2/B2: mock, finalState and a supplied userEmail are always removed, even when selected or in the body', async () => {
    const event = afterToolCallEvent({ mock: () => true, userEmail: 'spoofed@example.com' });
    const all = await new WebhookPayloadBuilder().build(event, hookWith({ body: { finalState: 1, mock: 2, userEmail: 'body@example.com' } }), NOTIFY);
    const selected = await new WebhookPayloadBuilder().build(event, hookWith({ eventFields: ['mock', 'finalState', 'operationId'] }), NOTIFY);
    for (const payload of [all, selected]) {
      expect(payload).not.toHaveProperty('mock');
      expect(payload).not.toHaveProperty('finalState');
      expect(payload).not.toHaveProperty('userEmail');
    }
    expect(selected).toEqual({ operationId: 'op-1', hookId: 'hook-1', hookType: 'afterToolCall' });
  });

  it('M2: function-valued fields are never sent', async () => {
    const payload = await new WebhookPayloadBuilder().build(afterToolCallEvent({ callback: () => 1 }), hookWith(), NOTIFY);
    expect(payload).not.toHaveProperty('callback');
  });

  it('B1: the input event and body are never mutated', async () => {
    const event = afterToolCallEvent({ userEmail: 'given@example.com' });
    const before = structuredClone(event);
    const body = { userId: 'user-2', tag: 't' };
    const { directory } = mapDirectory({ 'user-2': 'two@example.com' });
    await new WebhookPayloadBuilder(directory).build(event, hookWith({ body, eventFields: ['userEmail', 'result'] }), NOTIFY);
    expect(event).toEqual(before);
    expect(body).toEqual({ userId: 'user-2', tag: 't' });
  });
});

describe('B2 redactResultForEvents', () => {
  it('B2: returns a copy without result.data; the input keeps it', () => {
    const event = afterToolCallEvent();
    const redacted = redactResultForEvents(event);
    expect(redacted).not.toBe(event);
    expect(redacted.result).toEqual({ content: 'short text', success: true, state: { type: 'done' } });
    expect((event.result as { data?: unknown }).data).toEqual({ raw: 'x'.repeat(1000) });
  });

  it('B2: an event without a result (or without data) is copied unchanged', () => {
    const step = { id: 'e', type: 'afterStep', content: 'hi' };
    expect(redactResultForEvents(step)).toEqual(step);
    expect(redactResultForEvents(step)).not.toBe(step);
    const noData = afterToolCallEvent({ result: { content: 'c', success: true } });
    expect(redactResultForEvents(noData)).toEqual(noData);
  });

  it('B2: a notification payload carries the slimmed result', async () => {
    const payload = await new WebhookPayloadBuilder().build(afterToolCallEvent(), hookWith(), NOTIFY);
    expect(payload!.result).toEqual({ content: 'short text', success: true, state: { type: 'done' } });
  });

  it('B2: a control payload carries the full result', async () => {
    const payload = await new WebhookPayloadBuilder().build(afterToolCallEvent(), hookWith({ responseHandling: 'toolCall' }), CONTROL);
    expect((payload!.result as { data?: unknown }).data).toEqual({ raw: 'x'.repeat(1000) });
  });
});

describe('B3 userEmail', () => {
  it('B3: when selected, userEmail is resolved from the event userId and replaces any given value', async () => {
    const { directory, calls } = mapDirectory({ 'user-1': 'one@example.com' });
    const payload = await new WebhookPayloadBuilder(directory).build(
      afterToolCallEvent({ userEmail: 'spoofed@example.com' }),
      hookWith({ eventFields: ['userId', 'userEmail'], body: { userEmail: 'body@example.com' } }),
      NOTIFY,
    );
    expect(payload).toEqual({ userId: 'user-1', userEmail: 'one@example.com', hookId: 'hook-1', hookType: 'afterToolCall' });
    expect(calls).toEqual(['user-1']);
  });

  it('B3: body.userId is the final effective id', async () => {
    const { directory, calls } = mapDirectory({ 'user-1': 'one@example.com', 'user-2': 'two@example.com' });
    const payload = await new WebhookPayloadBuilder(directory).build(
      afterToolCallEvent(),
      hookWith({ eventFields: ['userId', 'userEmail'], body: { userId: 'user-2' } }),
      NOTIFY,
    );
    expect(payload).toMatchObject({ userId: 'user-2', userEmail: 'two@example.com' });
    expect(calls).toEqual(['user-2']);
  });

  it.each([
    ['a number', 42],
    ['an empty string', ''],
    ['blank', '   '],
    ['null', null],
  ])('B3: an explicitly invalid body.userId (%s) omits the email without a look-up', async (_label, userId) => {
    const { directory, calls } = mapDirectory({ 'user-1': 'one@example.com' });
    const payload = await new WebhookPayloadBuilder(directory).build(afterToolCallEvent(), hookWith({ eventFields: ['userEmail', 'operationId'], body: { userId } }), NOTIFY);
    expect(payload).not.toHaveProperty('userEmail');
    expect(calls).toEqual([]);
  });

  it('B3: an event without a userId omits the email', async () => {
    const { directory, calls } = mapDirectory({});
    const event = afterToolCallEvent();
    delete event.userId;
    const payload = await new WebhookPayloadBuilder(directory).build(event, hookWith({ eventFields: ['userEmail', 'operationId'] }), NOTIFY);
    expect(payload).toEqual({ operationId: 'op-1', hookId: 'hook-1', hookType: 'afterToolCall' });
    expect(calls).toEqual([]);
  });

  it.each([
    ['missing', async () => undefined],
    ['empty', async () => ''],
    ['not a string', async () => 7 as unknown as string],
    ['a rejected look-up', async () => Promise.reject(new Error('db down'))],
    [
      'a synchronous throw',
      () => {
        throw new Error('db down');
      },
    ],
  ])('B3: a %s email omits the field', async (_label, findEmail) => {
    const directory: UserDirectory = { findEmail: findEmail as UserDirectory['findEmail'] };
    const payload = await new WebhookPayloadBuilder(directory).build(afterToolCallEvent(), hookWith({ eventFields: ['userEmail', 'operationId'] }), NOTIFY);
    expect(payload).toEqual({ operationId: 'op-1', hookId: 'hook-1', hookType: 'afterToolCall' });
  });

  it('B3: an email-only projection keeps the event id', async () => {
    const { directory } = mapDirectory({ 'user-1': 'one@example.com' });
    const payload = await new WebhookPayloadBuilder(directory).build(afterToolCallEvent(), hookWith({ eventFields: ['userEmail'] }), NOTIFY);
    expect(payload).toEqual({ id: 'evt-1', userEmail: 'one@example.com', hookId: 'hook-1', hookType: 'afterToolCall' });
  });

  it('B3: an email-only projection keeps the id even when the email is omitted', async () => {
    const payload = await new WebhookPayloadBuilder().build(afterToolCallEvent(), hookWith({ eventFields: ['userEmail', 'noSuchField'] }), NOTIFY);
    expect(payload).toEqual({ id: 'evt-1', hookId: 'hook-1', hookType: 'afterToolCall' });
  });

  it('B3: a projection with other fields does not add the id', async () => {
    const { directory } = mapDirectory({ 'user-1': 'one@example.com' });
    const payload = await new WebhookPayloadBuilder(directory).build(afterToolCallEvent(), hookWith({ eventFields: ['userEmail', 'stepIndex'] }), NOTIFY);
    expect(payload).toEqual({ stepIndex: 2, userEmail: 'one@example.com', hookId: 'hook-1', hookType: 'afterToolCall' });
  });

  it('B3: no look-up when userEmail is not selected (also without eventFields)', async () => {
    const { directory, calls } = mapDirectory({ 'user-1': 'one@example.com' });
    const builder = new WebhookPayloadBuilder(directory);
    expect(await builder.build(afterToolCallEvent(), hookWith(), NOTIFY)).not.toHaveProperty('userEmail');
    expect(await builder.build(afterToolCallEvent(), hookWith({ eventFields: ['userId'] }), NOTIFY)).not.toHaveProperty('userEmail');
    expect(calls).toEqual([]);
  });

  it('B3: without a directory a selected email is omitted', async () => {
    const payload = await new WebhookPayloadBuilder().build(afterToolCallEvent(), hookWith({ eventFields: ['userEmail', 'userId'] }), NOTIFY);
    expect(payload).toEqual({ userId: 'user-1', hookId: 'hook-1', hookType: 'afterToolCall' });
  });
});

describe('B4 email cache', () => {
  const emailHook = hookWith({ eventFields: ['userEmail'] });
  const forUser = (userId: string) => afterToolCallEvent({ userId });

  it('B4: one look-up per user across builds', async () => {
    const { directory, calls } = mapDirectory({ 'user-1': 'one@example.com' });
    const builder = new WebhookPayloadBuilder(directory);
    for (let i = 0; i < 3; i++) expect((await builder.build(forUser('user-1'), emailHook, NOTIFY))!.userEmail).toBe('one@example.com');
    expect(calls).toEqual(['user-1']);
  });

  it('B4: a pending look-up is shared by concurrent builds (directory called once)', async () => {
    const { directory, calls, pending } = deferredDirectory();
    const builder = new WebhookPayloadBuilder(directory);
    const builds = [1, 2, 3].map(() => builder.build(forUser('user-1'), emailHook, NOTIFY));
    await flush();
    expect(calls).toEqual(['user-1']);
    pending.get('user-1')!.resolve('one@example.com');
    for (const payload of await Promise.all(builds)) expect(payload!.userEmail).toBe('one@example.com');
    expect(calls).toEqual(['user-1']);
  });

  it('B4: failed look-ups are cached', async () => {
    const findEmail = jest.fn<UserDirectory['findEmail']>().mockRejectedValue(new Error('db down'));
    const builder = new WebhookPayloadBuilder({ findEmail });
    expect(await builder.build(forUser('user-1'), emailHook, NOTIFY)).not.toHaveProperty('userEmail');
    expect(await builder.build(forUser('user-1'), emailHook, NOTIFY)).not.toHaveProperty('userEmail');
    expect(findEmail).toHaveBeenCalledTimes(1);
  });

  it('B4: missing emails are cached', async () => {
    const { directory, calls } = mapDirectory({});
    const builder = new WebhookPayloadBuilder(directory);
    await builder.build(forUser('ghost'), emailHook, NOTIFY);
    await builder.build(forUser('ghost'), emailHook, NOTIFY);
    expect(calls).toEqual(['ghost']);
  });

  it('B4: entries expire after ttlMs (injected clock); a new look-up sees the new email', async () => {
    let now = 1_000;
    const emails: Record<string, string> = { 'user-1': 'old@example.com' };
    const { directory, calls } = mapDirectory(emails);
    const builder = new WebhookPayloadBuilder(directory, { ttlMs: 5_000, now: () => now });
    expect((await builder.build(forUser('user-1'), emailHook, NOTIFY))!.userEmail).toBe('old@example.com');
    emails['user-1'] = 'new@example.com';
    now += 4_999;
    expect((await builder.build(forUser('user-1'), emailHook, NOTIFY))!.userEmail).toBe('old@example.com');
    now += 1;
    expect((await builder.build(forUser('user-1'), emailHook, NOTIFY))!.userEmail).toBe('new@example.com');
    expect(calls).toEqual(['user-1', 'user-1']);
  });

  it('B4: the default TTL is 5 minutes', async () => {
    let now = 0;
    const { directory, calls } = mapDirectory({ 'user-1': 'one@example.com' });
    const builder = new WebhookPayloadBuilder(directory, { now: () => now });
    await builder.build(forUser('user-1'), emailHook, NOTIFY);
    now = 5 * 60 * 1000 - 1;
    await builder.build(forUser('user-1'), emailHook, NOTIFY);
    expect(calls).toHaveLength(1);
    now = 5 * 60 * 1000;
    await builder.build(forUser('user-1'), emailHook, NOTIFY);
    expect(calls).toHaveLength(2);
  });

  it('B4: at most maxUsers entries; the oldest is evicted first', async () => {
    const { directory, calls } = mapDirectory({ a: 'a@example.com', b: 'b@example.com', c: 'c@example.com' });
    const builder = new WebhookPayloadBuilder(directory, { maxUsers: 2 });
    for (const user of ['a', 'b', 'c']) await builder.build(forUser(user), emailHook, NOTIFY);
    expect(builder.cachedUsers).toBe(2);
    await builder.build(forUser('c'), emailHook, NOTIFY); // cached
    await builder.build(forUser('b'), emailHook, NOTIFY); // cached
    expect(calls).toEqual(['a', 'b', 'c']);
    await builder.build(forUser('a'), emailHook, NOTIFY); // evicted: looked up again, evicting b
    expect(calls).toEqual(['a', 'b', 'c', 'a']);
    expect(builder.cachedUsers).toBe(2);
    await builder.build(forUser('b'), emailHook, NOTIFY);
    expect(calls).toEqual(['a', 'b', 'c', 'a', 'b']);
  });

  it('B4: the default bound is 1,000 users', async () => {
    const { directory } = mapDirectory({});
    const builder = new WebhookPayloadBuilder(directory);
    for (let i = 0; i < 1_005; i++) await builder.build(forUser(`user-${i}`), emailHook, NOTIFY);
    expect(builder.cachedUsers).toBe(1_000);
  });

  it('B4: the cache belongs to one builder (dispatcher)', async () => {
    const { directory, calls } = mapDirectory({ 'user-1': 'one@example.com' });
    await new WebhookPayloadBuilder(directory).build(forUser('user-1'), emailHook, NOTIFY);
    await new WebhookPayloadBuilder(directory).build(forUser('user-1'), emailHook, NOTIFY);
    expect(calls).toEqual(['user-1', 'user-1']);
  });

  it('B4: invalid cache options are refused', () => {
    const { directory } = mapDirectory({});
    expect(() => new WebhookPayloadBuilder(directory, { maxUsers: 0 })).toThrow(RangeError);
    expect(() => new WebhookPayloadBuilder(directory, { maxUsers: 1.5 })).toThrow(RangeError);
    expect(() => new WebhookPayloadBuilder(directory, { ttlMs: -1 })).toThrow(RangeError);
  });
});

describe('B4 cancellation', () => {
  const emailHook = hookWith({ eventFields: ['userEmail'] });

  it('B4: one waiter cancelled returns undefined; the other still gets the email from the shared look-up', async () => {
    const { directory, calls, pending } = deferredDirectory();
    const builder = new WebhookPayloadBuilder(directory);
    const controller = new AbortController();
    const cancelled = builder.build(afterToolCallEvent(), emailHook, { control: false, signal: controller.signal });
    const other = builder.build(afterToolCallEvent(), emailHook, NOTIFY);
    await flush();
    controller.abort();
    expect(await cancelled).toBeUndefined();
    pending.get('user-1')!.resolve('one@example.com');
    expect((await other)!.userEmail).toBe('one@example.com');
    // The shared look-up was not cancelled: it filled the cache.
    expect((await builder.build(afterToolCallEvent(), emailHook, NOTIFY))!.userEmail).toBe('one@example.com');
    expect(calls).toEqual(['user-1']);
  });

  it('B4: the cancelled waiter returns at once, without waiting for the look-up', async () => {
    const { directory } = deferredDirectory();
    const controller = new AbortController();
    const build = new WebhookPayloadBuilder(directory).build(afterToolCallEvent(), emailHook, { control: false, signal: controller.signal });
    await flush();
    controller.abort();
    // The look-up never settles; only the abort can end this build.
    expect(await build).toBeUndefined();
  });

  it('B4: an already-aborted signal returns undefined without a look-up', async () => {
    const { directory, calls } = mapDirectory({ 'user-1': 'one@example.com' });
    const builder = new WebhookPayloadBuilder(directory);
    expect(await builder.build(afterToolCallEvent(), emailHook, { control: false, signal: AbortSignal.abort() })).toBeUndefined();
    expect(await builder.build(afterToolCallEvent(), hookWith(), { control: true, signal: AbortSignal.abort() })).toBeUndefined();
    expect(calls).toEqual([]);
  });

  it('B4: a finished build leaves no abort listener behind', async () => {
    const { directory } = mapDirectory({ 'user-1': 'one@example.com' });
    const controller = new AbortController();
    const payload = await new WebhookPayloadBuilder(directory).build(afterToolCallEvent(), emailHook, { control: false, signal: controller.signal });
    expect(payload!.userEmail).toBe('one@example.com');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('B4: a signal that never fires does not change the payload', async () => {
    const payload = await new WebhookPayloadBuilder().build(afterToolCallEvent(), hookWith({ eventFields: ['operationId'] }), {
      control: false,
      signal: new AbortController().signal,
    });
    expect(payload).toEqual({ operationId: 'op-1', hookId: 'hook-1', hookType: 'afterToolCall' });
  });
});
