/**
 * DESIGN §4 and §7, the SSE route over the runtime's operation follower (the source of `runtime.events()`): it reads the operation when one of its events
 * arrives (so it follows any process), after a resync and at the safety re-check — never on a poll of its
 * own; emits messages and status changes once each, ends at `completed`, keeps an idle stream alive with
 * heartbeats, and stops (unsubscribed) as soon as the client goes away or the app shuts down.
 */
import { jest } from '@jest/globals';
import type { Response } from 'express';
import { filter, Subject } from 'rxjs';
import type { OperationEventSignal, OperationEvents } from '../../../src/runtime/operation-events.port.js';
import { OperationEventStreams } from '../../../src/server/api/operation-event-stream.js';
import { HEARTBEAT_MS } from '../../../src/server/api/sse-stream.js';
import { FakeResponse } from './fake-sse-response.js';
import { OperationFollower } from '../../../src/runtime/reading/operation-follower.js';
import type { OperationReadService } from '../../../src/runtime/reading/operation-read.service.js';
import { messageView } from '../../../src/runtime/reading/operation-views.js';
import type { StoredMessage, StoredOperation } from '../../../src/runtime/runtime-store.port.js';
import { LocalOperationDeltas } from '../../../src/runtime/streaming/local-operation-deltas.js';
import type { OperationDeltas } from '../../../src/runtime/streaming/operation-deltas.port.js';
import { MAX_BUFFERED_BYTES } from '../../../src/server/api/sse-stream.js';

const RECHECK_MS = 10_000;

const operation = (status: StoredOperation['status'], version: number, reason?: StoredOperation['reason']): StoredOperation =>
  ({ id: 'op', agentId: 'a', status, ...(reason ? { reason } : {}), stepIndex: 0, runContext: {}, usage: { inputTokens: 1, outputTokens: 2, costUsd: 0 }, version }) as StoredOperation;
const message = (seq: number, role: StoredMessage['role']): StoredMessage => ({ id: `m${seq}`, seq, role, content: `c${seq}` });

/** An `OperationEvents` the test pushes signals into; `listening` says whether a stream is subscribed. */
function fakeEvents() {
  const signals = new Subject<OperationEventSignal>();
  const port: OperationEvents = {
    events$: signals.asObservable(),
    of: (id) => signals.pipe(filter((signal) => signal.kind === 'resync' || signal.operationId === id)),
  };
  return {
    port,
    push: (signal: OperationEventSignal) => signals.next(signal),
    get listening() {
      return signals.observed;
    },
  };
}

/**
 * A reader whose operation moves through `states`, one per read (the last one repeats). With `commit`,
 * every read but the last is followed by the event of the commit that leads to the next state.
 */
function reader(states: { operation: StoredOperation; messages: StoredMessage[] }[], commit?: () => void) {
  let polls = 0;
  let state = states[0]!;
  return {
    get polls() {
      return polls;
    },
    find: async () => {
      state = states[Math.min(polls, states.length - 1)]!;
      polls++;
      if (commit && polls < states.length) setImmediate(commit);
      return state.operation;
    },
    messagesAfter: async (_id: string, after = 0) => state.messages.filter((m) => m.seq > after).map((m) => ({ seq: m.seq, message: messageView(m) })),
    view: async (op: StoredOperation) => ({ operationId: op.id, agentId: op.agentId, status: op.status, ...(op.reason ? { reason: op.reason } : {}), usage: op.usage }),
  };
}

const streamsOn = (fake: unknown, events: OperationEvents, deltas: OperationDeltas = new LocalOperationDeltas()) =>
  new OperationEventStreams(new OperationFollower(fake as OperationReadService, events, { recheckMs: RECHECK_MS }, deltas));

/** Lets the loop run what it can without the clock moving. */
const settle = async () => {
  for (let i = 0; i < 5; i++) await jest.advanceTimersByTimeAsync(0);
};

describe('GET …/events: the event-driven loop', () => {
  it('DESIGN §4 events: emits each message once and each status change once, read on each commit event, and ends after completed', async () => {
    const events = fakeEvents();
    const fake = reader(
      [
        { operation: operation('running', 1), messages: [message(1, 'user')] },
        { operation: operation('running', 1), messages: [message(1, 'user')] },
        { operation: operation('running', 2), messages: [message(1, 'user'), message(2, 'assistant')] },
        { operation: operation('completed', 3, 'done'), messages: [message(1, 'user'), message(2, 'assistant'), message(3, 'assistant')] },
      ],
      () => events.push({ operationId: 'op', kind: 'status' }),
    );
    const response = new FakeResponse();
    await streamsOn(fake, events.port).stream('op', response as unknown as Response, 0);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(response.events().map((e) => `${e.event}:${e.data.status ?? e.data.id}`)).toEqual(['message:m1', 'status:running', 'message:m2', 'message:m3', 'status:completed']);
    expect(response.writableEnded).toBe(true);
    expect(fake.polls).toBe(4);
    expect(events.listening).toBe(false);
  });

  describe('on a fake clock', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('DESIGN §4 events: reads again only on an event of the operation, a resync or the safety re-check', async () => {
      const events = fakeEvents();
      const fake = reader([{ operation: operation('waiting', 1), messages: [] }]);
      const response = new FakeResponse();
      const streaming = streamsOn(fake, events.port).stream('op', response as unknown as Response, 0);
      await settle();
      expect(fake.polls).toBe(1);
      await jest.advanceTimersByTimeAsync(RECHECK_MS - 1);
      expect(fake.polls).toBe(1); // no poll of its own
      events.push({ operationId: 'another', kind: 'status' });
      await settle();
      expect(fake.polls).toBe(1); // another operation's event
      events.push({ operationId: 'op', kind: 'intervention' });
      await settle();
      expect(fake.polls).toBe(2);
      events.push({ kind: 'resync' });
      await settle();
      expect(fake.polls).toBe(3);
      await jest.advanceTimersByTimeAsync(RECHECK_MS);
      expect(fake.polls).toBe(4); // the backstop, a full re-check interval after the last read
      response.emit('close');
      await streaming;
    });

    it('keeps an idle stream alive with a heartbeat', async () => {
      const events = fakeEvents();
      const fake = reader([{ operation: operation('waiting', 1), messages: [] }]);
      const response = new FakeResponse();
      const streaming = streamsOn(fake, events.port).stream('op', response as unknown as Response, 0);
      await settle();
      expect(response.heartbeats()).toBe(0);
      await jest.advanceTimersByTimeAsync(HEARTBEAT_MS);
      expect(response.heartbeats()).toBe(1);
      response.emit('close');
      await streaming;
    });

    it('stops reading and unsubscribes when the client disconnects', async () => {
      const events = fakeEvents();
      const fake = reader([{ operation: operation('waiting', 1), messages: [] }]);
      const response = new FakeResponse();
      const streaming = streamsOn(fake, events.port).stream('op', response as unknown as Response, 0);
      await settle();
      expect(events.listening).toBe(true);
      response.emit('close');
      await streaming; // the close woke the loop's wait: it ends without the clock moving
      expect(events.listening).toBe(false);
      const pollsAtClose = fake.polls;
      events.push({ operationId: 'op', kind: 'status' });
      await jest.advanceTimersByTimeAsync(RECHECK_MS * 3);
      expect(fake.polls).toBe(pollsAtClose);
    });

    it('ends open streams at shutdown', async () => {
      const events = fakeEvents();
      const fake = reader([{ operation: operation('waiting', 1), messages: [] }]);
      const streams = streamsOn(fake, events.port);
      const response = new FakeResponse();
      const streaming = streams.stream('op', response as unknown as Response, 0);
      await settle();
      expect(fake.polls).toBeGreaterThan(0); // mid-stream, waiting for an event
      streams.beforeApplicationShutdown();
      await streaming; // the shutdown woke the loop's wait: it ends without the clock moving
      expect(response.writableEnded).toBe(true);
      expect(events.listening).toBe(false);
    });
  });

  it('a store failure ends the stream with an error event (no stack, no message of the cause)', async () => {
    const fake = { find: async () => Promise.reject(new Error('SQLITE_BUSY at /secret/path')), messagesAfter: async () => [], view: async () => ({}) };
    const response = new FakeResponse();
    await streamsOn(fake, fakeEvents().port).stream('op', response as unknown as Response, 0);
    expect(response.events()).toEqual([{ event: 'error', data: { error: { code: 'internal', message: 'the event stream failed; reconnect to resume' } } }]);
    expect(response.writableEnded).toBe(true);
  });
});

describe('K5: GET …/events carries the deltas', () => {
  it('K5: a delta is an `event: delta` with { stepIndex, text } and no id:, after the messages of the first read', async () => {
    const events = fakeEvents();
    const deltas = new LocalOperationDeltas();
    const fake = reader([{ operation: operation('running', 1), messages: [message(1, 'user')] }]);
    const response = new FakeResponse();
    // Published before the stream's first read finished: held until the messages so far went out.
    const streaming = streamsOn(fake, events.port, deltas).stream('op', response as unknown as Response, 0);
    deltas.publish('op', { stepIndex: 0, text: 'Hel' });
    await new Promise((resolve) => setImmediate(resolve));
    deltas.publish('op', { stepIndex: 0, text: 'lo' });
    expect(response.events().map((e) => e.event)).toEqual(['message', 'status', 'delta', 'delta']);
    const written = response.chunks.filter((chunk) => chunk.includes('event: delta'));
    expect(written).toEqual(['event: delta\ndata: {"stepIndex":0,"text":"Hel"}\n\n', 'event: delta\ndata: {"stepIndex":0,"text":"lo"}\n\n']);
    response.emit('close');
    await streaming;
    // The stream's subscription went with it: publishing to an unwatched operation reaches nothing.
    expect(deltas.isWatched('op')).toBe(false);
  });

  it('K5: a client that stopped reading never holds the publisher back; past the buffer cap it is cut', async () => {
    const events = fakeEvents();
    const deltas = new LocalOperationDeltas();
    const fake = reader([{ operation: operation('running', 1), messages: [] }]);
    const response = new FakeResponse();
    // A client that takes nothing: every write stays buffered.
    response.writableNeedDrain = true;
    response.write = (chunk: string) => {
      response.chunks.push(chunk);
      response.writableLength += chunk.length;
      return false;
    };
    const streaming = streamsOn(fake, events.port, deltas).stream('op', response as unknown as Response, 0);
    await new Promise((resolve) => setImmediate(resolve));
    const piece = 'x'.repeat(1024);
    // A synchronous loop: publish() never waits for the client; the client is cut at the cap.
    for (let i = 0; i < 2 * (MAX_BUFFERED_BYTES / 1024); i++) deltas.publish('op', { stepIndex: 0, text: piece });
    expect(response.destroyed).toBe(true);
    await streaming;
    const bufferedDeltas = response.chunks.filter((chunk) => chunk.includes('event: delta')).length;
    expect(bufferedDeltas).toBeLessThan(2 * (MAX_BUFFERED_BYTES / 1024));
    // Cut at the first write past the cap, and nothing written after it.
    expect(response.writableLength).toBeGreaterThan(MAX_BUFFERED_BYTES);
    expect(response.writableLength - 1100).toBeLessThanOrEqual(MAX_BUFFERED_BYTES);
  });
});
