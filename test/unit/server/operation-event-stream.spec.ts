/**
 * Issue 7 item 3, the SSE loop on its own: it polls (so it follows any process), emits messages and
 * status changes once each, ends at `completed`, and stops polling as soon as the client goes away or the
 * app shuts down.
 */
import { EventEmitter } from 'node:events';
import { jest } from '@jest/globals';
import type { Response } from 'express';
import { EVENT_POLL_MS, OperationEventStreams } from '../../../src/server/api/operation-event-stream.js';
import type { OperationReader } from '../../../src/server/api/operation-reader.js';
import type { MessageRecord, OperationRecord } from '../../../src/persistence/records.js';

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

const operation = (status: OperationRecord['status'], version: number, reason?: OperationRecord['reason']): OperationRecord =>
  ({ id: 'op', agentId: 'a', status, ...(reason ? { reason } : {}), stepIndex: 0, runContext: {}, usage: { inputTokens: 1, outputTokens: 2, costUsd: 0 }, version, createdAt: '', updatedAt: '' }) as OperationRecord;
const message = (seq: number, role: MessageRecord['role']): MessageRecord => ({ id: `m${seq}`, operationId: 'op', seq, role, content: `c${seq}`, createdAt: '' });

/** A reader whose operation moves through `states`, one per poll (the last one repeats). */
function reader(states: { operation: OperationRecord; messages: MessageRecord[] }[]) {
  let polls = 0;
  let state = states[0]!;
  return {
    get polls() {
      return polls;
    },
    find: async () => {
      state = states[Math.min(polls, states.length - 1)]!;
      polls++;
      return state.operation;
    },
    messages: async (_id: string, after = 0) => state.messages.filter((m) => m.seq > after),
    view: async (op: OperationRecord) => ({ operationId: op.id, agentId: op.agentId, status: op.status, ...(op.reason ? { reason: op.reason } : {}), usage: op.usage }),
  };
}

describe('GET …/events: the polling loop', () => {
  it('emits each message once and each status change once, and ends after completed', async () => {
    const fake = reader([
      { operation: operation('running', 1), messages: [message(1, 'user')] },
      { operation: operation('running', 1), messages: [message(1, 'user')] },
      { operation: operation('running', 2), messages: [message(1, 'user'), message(2, 'assistant')] },
      { operation: operation('completed', 3, 'done'), messages: [message(1, 'user'), message(2, 'assistant'), message(3, 'assistant')] },
    ]);
    const response = new FakeResponse();
    await new OperationEventStreams(fake as unknown as OperationReader).stream('op', response as unknown as Response, 0);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(response.events().map((e) => `${e.event}:${e.data.status ?? e.data.id}`)).toEqual(['message:m1', 'status:running', 'message:m2', 'message:m3', 'status:completed']);
    expect(response.writableEnded).toBe(true);
    expect(fake.polls).toBe(4);
  });

  // The poll interval on a fake clock: the tests move time on by whole polls instead of sleeping.
  describe('on a fake clock', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('stops polling when the client disconnects', async () => {
      const fake = reader([{ operation: operation('waiting', 1), messages: [] }]);
      const response = new FakeResponse();
      const streaming = new OperationEventStreams(fake as unknown as OperationReader).stream('op', response as unknown as Response, 0);
      await jest.advanceTimersByTimeAsync(EVENT_POLL_MS * 2);
      expect(fake.polls).toBeGreaterThan(1);
      response.emit('close');
      await streaming; // the close woke the loop's wait: it ends without the clock moving
      const pollsAtClose = fake.polls;
      await jest.advanceTimersByTimeAsync(EVENT_POLL_MS * 10);
      expect(fake.polls).toBe(pollsAtClose);
    });

    it('ends open streams at shutdown', async () => {
      const fake = reader([{ operation: operation('waiting', 1), messages: [] }]);
      const streams = new OperationEventStreams(fake as unknown as OperationReader);
      const response = new FakeResponse();
      const streaming = streams.stream('op', response as unknown as Response, 0);
      await jest.advanceTimersByTimeAsync(EVENT_POLL_MS);
      expect(fake.polls).toBeGreaterThan(0); // mid-stream, waiting between polls
      streams.beforeApplicationShutdown();
      await streaming; // the shutdown woke the loop's wait: it ends without the clock moving
      expect(response.writableEnded).toBe(true);
    });
  });

  it('a store failure ends the stream with an error event (no stack, no message of the cause)', async () => {
    const fake = { find: async () => Promise.reject(new Error('SQLITE_BUSY at /secret/path')), messages: async () => [], view: async () => ({}) };
    const response = new FakeResponse();
    await new OperationEventStreams(fake as unknown as OperationReader).stream('op', response as unknown as Response, 0);
    expect(response.events()).toEqual([{ event: 'error', data: { error: { code: 'internal', message: 'the event stream failed; reconnect to resume' } } }]);
    expect(response.writableEnded).toBe(true);
  });
});
