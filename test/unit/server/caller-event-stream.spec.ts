/**
 * DESIGN §7 `GET /v1/events` (issue 17 item 3, "updates live"), the loop on its own: it reads only on an
 * event that names a created or changed operation, reads the ids gathered meanwhile together and filtered
 * by the caller's owner, sends each of the caller's operations once per read and never another owner's,
 * forgets nothing but reads a foreign operation only once, forwards a `resync`, keeps an idle stream alive
 * and stops (unsubscribed) when the client goes away or the app shuts down.
 */
import { EventEmitter } from 'node:events';
import { jest } from '@jest/globals';
import type { Response } from 'express';
import { Subject, filter } from 'rxjs';
import type { OperationEventSignal, OperationEvents } from '../../../src/runtime/operation-events.port.js';
import { CallerEventStreams, READ_BATCH } from '../../../src/server/api/caller-event-stream.js';
import type { Caller } from '../../../src/server/api/caller.js';
import type { OperationReader } from '../../../src/server/api/operation-reader.js';
import type { OperationListItemView } from '../../../src/server/api/operation-views.js';
import { HEARTBEAT_MS } from '../../../src/server/api/sse-stream.js';

class FakeResponse extends EventEmitter {
  chunks: string[] = [];
  headers: Record<string, string> = {};
  statusCode = 0;
  writableEnded = false;
  destroyed = false;
  status(code: number) {
    this.statusCode = code;
    return this;
  }
  setHeader(name: string, value: string) {
    this.headers[name.toLowerCase()] = value;
  }
  flushHeaders() {}
  write(chunk: string) {
    this.chunks.push(chunk);
    return true;
  }
  end() {
    this.writableEnded = true;
  }
  events(): { event: string; data: any }[] {
    return this.chunks
      .filter((c) => c.includes('event: '))
      .map((c) => ({ event: /event: (\w+)/.exec(c)![1]!, data: JSON.parse(/data: (.*)/.exec(c)![1]!) }));
  }
}

const ALICE: Caller = { authenticated: true, ownerId: 'alice' } as Caller;

const item = (operationId: string, status: OperationListItemView['status'] = 'running'): OperationListItemView =>
  ({ operationId, agentId: 'a', status, createdAt: '2026-12-01T00:00:00.000Z', updatedAt: '2026-12-01T00:00:00.000Z', steps: 0, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } }) as OperationListItemView;

function fakeEvents() {
  const signals = new Subject<OperationEventSignal>();
  const port: OperationEvents = { events$: signals.asObservable(), of: (id) => signals.pipe(filter((s) => s.kind === 'resync' || s.operationId === id)) };
  return {
    port,
    push: (signal: OperationEventSignal) => signals.next(signal),
    get listening() {
      return signals.observed;
    },
  };
}

/** A reader holding alice's and bob's operations; `reads` records the ids of every read and who asked. */
function fakeReader(owners: Record<string, string>, status: () => OperationListItemView['status'] = () => 'running') {
  const reads: { ids: string[]; ownerId: string }[] = [];
  return {
    reads,
    summaries: async (caller: Caller, ids: readonly string[]) => {
      const ownerId = (caller as { ownerId: string }).ownerId;
      reads.push({ ids: [...ids], ownerId });
      return ids.filter((id) => owners[id] === ownerId).map((id) => item(id, status()));
    },
  };
}

const settle = async () => {
  for (let i = 0; i < 5; i++) await jest.advanceTimersByTimeAsync(0);
};

describe('GET /v1/events: the caller-wide loop', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it("DESIGN §7 /v1/events: sends the caller's created and changed operations, never another owner's, and reads a foreign one only once", async () => {
    const events = fakeEvents();
    const reader = fakeReader({ a1: 'alice', b1: 'bob' });
    const response = new FakeResponse();
    const streaming = new CallerEventStreams(reader as unknown as OperationReader, events.port).stream(ALICE, response as unknown as Response);
    await settle();
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(reader.reads).toEqual([]); // nothing read before an event

    events.push({ operationId: 'b1', kind: 'created', status: 'running', version: 1 });
    events.push({ operationId: 'a1', kind: 'created', status: 'running', version: 1 });
    await settle();
    events.push({ operationId: 'a1', kind: 'message' }); // not a change the list shows
    events.push({ operationId: 'a1', kind: 'intervention' });
    events.push({ operationId: 'b1', kind: 'status', status: 'completed' }); // known to be bob's: not read again
    await settle();
    events.push({ operationId: 'a1', kind: 'status', status: 'completed' });
    await settle();

    expect(response.events().map((e) => `${e.event}:${e.data.operationId}`)).toEqual(['operation:a1', 'operation:a1']);
    expect(reader.reads.flatMap((read) => read.ids)).toEqual(['b1', 'a1', 'a1']);
    expect(reader.reads.every((read) => read.ownerId === 'alice')).toBe(true);
    response.emit('close');
    await streaming;
    expect(events.listening).toBe(false);
    expect(response.writableEnded).toBe(true);
  });

  it('DESIGN §4 events: the changes of a burst are read together, each operation once, at most READ_BATCH per read', async () => {
    const events = fakeEvents();
    const owners = Object.fromEntries(Array.from({ length: READ_BATCH + 20 }, (_, i) => [`a${i}`, 'alice']));
    const reader = fakeReader(owners);
    const response = new FakeResponse();
    const streaming = new CallerEventStreams(reader as unknown as OperationReader, events.port).stream(ALICE, response as unknown as Response);
    await settle();
    // All pushed before the loop runs again: one burst.
    for (let round = 0; round < 3; round++) for (const id of Object.keys(owners)) events.push({ operationId: id, kind: 'status' });
    await settle();
    expect(reader.reads.map((read) => read.ids.length)).toEqual([READ_BATCH, 20]);
    expect(response.events()).toHaveLength(READ_BATCH + 20);
    response.emit('close');
    await streaming;
  });

  it('forwards a resync (events may have been missed: re-read the list) and keeps an idle stream alive', async () => {
    const events = fakeEvents();
    const response = new FakeResponse();
    const streaming = new CallerEventStreams(fakeReader({}) as unknown as OperationReader, events.port).stream(ALICE, response as unknown as Response);
    await settle();
    events.push({ kind: 'resync' });
    await settle();
    expect(response.events()).toEqual([{ event: 'resync', data: {} }]);
    expect(response.chunks.filter((c) => c === ': keep-alive\n\n')).toHaveLength(0);
    await jest.advanceTimersByTimeAsync(HEARTBEAT_MS);
    expect(response.chunks.filter((c) => c === ': keep-alive\n\n')).toHaveLength(1);
    response.emit('close');
    await streaming;
  });

  it('ends open streams at shutdown and stops following events', async () => {
    const events = fakeEvents();
    const streams = new CallerEventStreams(fakeReader({}) as unknown as OperationReader, events.port);
    const response = new FakeResponse();
    const streaming = streams.stream(ALICE, response as unknown as Response);
    await settle();
    expect(events.listening).toBe(true);
    streams.beforeApplicationShutdown();
    await streaming;
    expect(response.writableEnded).toBe(true);
    expect(events.listening).toBe(false);
  });

  it('a store failure ends the stream with an error event (no stack, no message of the cause)', async () => {
    const events = fakeEvents();
    const reader = { summaries: async () => Promise.reject(new Error('connection to /secret/path refused')) };
    const response = new FakeResponse();
    const streaming = new CallerEventStreams(reader as unknown as OperationReader, events.port).stream(ALICE, response as unknown as Response);
    await settle();
    events.push({ operationId: 'a1', kind: 'created' });
    await settle();
    await streaming;
    expect(response.events()).toEqual([{ event: 'error', data: { error: { code: 'internal', message: 'the event stream failed; reconnect and re-read the list' } } }]);
    expect(response.writableEnded).toBe(true);
  });
});
