/**
 * DESIGN §7 `GET /v1/events` over the runtime's change follower (the source of `runtime.changes()`): it reads only on an
 * event that names a created or changed operation; the streams woken by one commit share one read; each
 * sends its caller's operations only and drops another owner's events once the owner is known; a change
 * during a read is read again; a `resync` is forwarded; a client already gone, a client too far behind, a
 * caller with too many streams and the app's shutdown all end it (unsubscribed).
 */
import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { Response } from 'express';
import { Subject, filter } from 'rxjs';
import type { OperationSummary } from '../../../src/runtime/operation-read.port.js';
import type { OperationEventSignal, OperationEvents } from '../../../src/runtime/operation-events.port.js';
import { ApiError } from '../../../src/server/api/api-error.js';
import { CallerEventStreams, STREAMS_PER_OWNER } from '../../../src/server/api/caller-event-stream.js';
import type { Caller } from '../../../src/server/api/caller.js';
import { OperationChanges } from '../../../src/runtime/reading/operation-changes.js';
import type { OperationReadService } from '../../../src/runtime/reading/operation-read.service.js';
import { SharedSummaryReads } from '../../../src/runtime/reading/shared-summary-reads.js';
import { HEARTBEAT_MS, MAX_BUFFERED_BYTES } from '../../../src/server/api/sse-stream.js';
import { FakeResponse } from './fake-sse-response.js';

const caller = (ownerId: string): Caller => ({ authenticated: true, ownerId });
const ALICE = caller('alice');

const summary = (id: string, ownerId: string, status: OperationSummary['status'] = 'running'): OperationSummary => ({
  id,
  agentId: 'a',
  ownerId,
  status,
  steps: 0,
  usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
  createdAt: '2026-12-01T00:00:00.000Z',
  updatedAt: '2026-12-01T00:00:00.000Z',
});

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

/** A reader over `owners` (id → owner); `reads` records the ids of every read; `hold` keeps the next reads pending. */
function fakeReader(owners: Record<string, string>, status: () => OperationSummary['status'] = () => 'running') {
  const reads: string[][] = [];
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  return {
    reads,
    hold() {
      gate = new Promise((resolve) => (open = resolve));
    },
    release() {
      gate = undefined;
      open?.();
    },
    summariesOf: async (ids: readonly string[]) => {
      reads.push([...ids]);
      const answer = ids.filter((id) => owners[id] !== undefined).map((id) => summary(id, owners[id]!, status()));
      if (gate) await gate;
      return answer;
    },
  };
}

function setup(owners: Record<string, string>, status?: () => OperationSummary['status']) {
  const events = fakeEvents();
  const reader = fakeReader(owners, status);
  const streams = new CallerEventStreams(new OperationChanges(new SharedSummaryReads(reader as unknown as OperationReadService), events.port));
  const open = (who: Caller = ALICE, response = new FakeResponse()) => ({ response, streaming: streams.stream(who, response as unknown as Response) });
  return { events, reader, streams, open };
}

const settle = async () => {
  for (let i = 0; i < 8; i++) await jest.advanceTimersByTimeAsync(0);
};

describe('GET /v1/events: the caller-wide loop', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it("DESIGN §7 /v1/events: sends the caller's created and changed operations, never another owner's; a known foreign owner is not read again", async () => {
    const { events, reader, open } = setup({ a1: 'alice', b1: 'bob' });
    const { response, streaming } = open();
    await settle();
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(reader.reads).toEqual([]); // nothing read before an event

    events.push({ operationId: 'b1', kind: 'created', status: 'running', version: 1 });
    events.push({ operationId: 'a1', kind: 'created', status: 'running', version: 1 });
    await settle();
    events.push({ operationId: 'a1', kind: 'message' }); // not a change the list shows
    events.push({ operationId: 'a1', kind: 'intervention' });
    events.push({ operationId: 'b1', kind: 'status', status: 'completed' }); // known to be bob's now
    await settle();
    events.push({ operationId: 'a1', kind: 'status', status: 'completed' });
    await settle();

    expect(response.events().map((e) => `${e.event}:${e.data.operationId}`)).toEqual(['operation:a1', 'operation:a1']);
    expect(reader.reads).toEqual([['b1', 'a1'], ['a1']]);
    // The list item's shape: no owner id on the wire.
    expect(response.events()[0]!.data).not.toHaveProperty('ownerId');
    response.emit('close');
    await streaming;
    expect(events.listening).toBe(false);
    expect(response.writableEnded).toBe(true);
  });

  it('DESIGN §4 events: the streams one commit wakes share one read, and each gets only its own owner\'s operations', async () => {
    const { events, reader, open } = setup({ a1: 'alice', b1: 'bob' });
    const alices = Array.from({ length: 10 }, () => open(ALICE));
    const bobs = Array.from({ length: 5 }, () => open(caller('bob')));
    await settle();
    events.push({ operationId: 'a1', kind: 'created' });
    events.push({ operationId: 'b1', kind: 'created' });
    await settle();
    expect(reader.reads).toHaveLength(1);
    for (const { response } of alices) expect(response.events().map((e) => e.data.operationId)).toEqual(['a1']);
    for (const { response } of bobs) expect(response.events().map((e) => e.data.operationId)).toEqual(['b1']);
    for (const { response, streaming } of [...alices, ...bobs]) {
      response.emit('close');
      await streaming;
    }
  });

  it('a change that commits while its read is running is read again (the first answer may predate it)', async () => {
    let status: OperationSummary['status'] = 'running';
    const { events, reader, open } = setup({ a1: 'alice' }, () => status);
    const { response, streaming } = open();
    await settle();
    reader.hold();
    events.push({ operationId: 'a1', kind: 'created' });
    await settle();
    expect(reader.reads).toHaveLength(1); // in flight
    status = 'completed';
    events.push({ operationId: 'a1', kind: 'status', status: 'completed' });
    reader.release();
    await settle();
    expect(reader.reads).toEqual([['a1'], ['a1']]);
    expect(response.events().map((e) => e.data.status)).toEqual(['running', 'completed']);
    response.emit('close');
    await streaming;
  });

  it('forwards a resync (events may have been missed: re-read the list) and keeps an idle stream alive', async () => {
    const { events, open } = setup({});
    const { response, streaming } = open();
    await settle();
    events.push({ kind: 'resync' });
    await settle();
    expect(response.events()).toEqual([{ event: 'resync', data: {} }]);
    expect(response.heartbeats()).toBe(0);
    await jest.advanceTimersByTimeAsync(HEARTBEAT_MS);
    expect(response.heartbeats()).toBe(1);
    response.emit('close');
    await streaming;
  });

  it('a client gone before the route ran (no close event will come) ends the stream at once', async () => {
    const { events, open } = setup({ a1: 'alice' });
    const gone = new FakeResponse();
    gone.destroyed = true;
    const { streaming } = open(ALICE, gone);
    await settle();
    await streaming;
    expect(events.listening).toBe(false);
  });

  it('a client that stopped reading is cut off once more than MAX_BUFFERED_BYTES wait for it', async () => {
    const { events, open } = setup({ a1: 'alice' });
    const { response, streaming } = open();
    await settle();
    response.writableLength = MAX_BUFFERED_BYTES + 1;
    events.push({ operationId: 'a1', kind: 'created' });
    await settle();
    await streaming;
    expect(response.destroyed).toBe(true);
    expect(events.listening).toBe(false);
  });

  it(`refuses a caller's stream beyond ${STREAMS_PER_OWNER} open ones (429), another caller's still opens, and a closed one frees its place`, async () => {
    const { open } = setup({});
    const streams = Array.from({ length: STREAMS_PER_OWNER }, () => open());
    await settle();
    const refused = open();
    await expect(refused.streaming).rejects.toEqual(expect.objectContaining({ status: 429, code: 'too_many_streams' }));
    await expect(refused.streaming).rejects.toBeInstanceOf(ApiError);
    const bobs = open(caller('bob'));
    await settle();
    expect(bobs.response.statusCode).toBe(200);
    streams[0]!.response.emit('close');
    await streams[0]!.streaming;
    const again = open();
    await settle();
    expect(again.response.statusCode).toBe(200);
    for (const { response, streaming } of [...streams.slice(1), bobs, again]) {
      response.emit('close');
      await streaming;
    }
  });

  it('ends open streams at shutdown and stops following events', async () => {
    const { events, streams, open } = setup({});
    const { response, streaming } = open();
    await settle();
    expect(events.listening).toBe(true);
    streams.beforeApplicationShutdown();
    await streaming;
    expect(response.writableEnded).toBe(true);
    expect(events.listening).toBe(false);
  });

  it('a store failure ends the stream with an error event; neither the event nor the log carries the cause', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const events = fakeEvents();
      const reader = { summariesOf: async () => Promise.reject(new Error('connection to /secret/path refused')) };
      const streams = new CallerEventStreams(new OperationChanges(new SharedSummaryReads(reader as unknown as OperationReadService), events.port));
      const response = new FakeResponse();
      const streaming = streams.stream(ALICE, response as unknown as Response);
      await settle();
      events.push({ operationId: 'a1', kind: 'created' });
      await settle();
      await streaming;
      expect(response.events()).toEqual([{ event: 'error', data: { error: { code: 'internal', message: 'the event stream failed; reconnect and re-read the list' } } }]);
      expect(response.writableEnded).toBe(true);
      expect(warn).toHaveBeenCalled();
      expect(JSON.stringify(warn.mock.calls)).not.toContain('secret');
    } finally {
      warn.mockRestore();
    }
  });
});
