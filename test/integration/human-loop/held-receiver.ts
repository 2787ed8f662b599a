/**
 * A loopback webhook receiver that holds every response until the test releases it: a slow policy whose
 * decision arrives exactly when the test says, with no fixed sleeps. It counts the requests it got.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HeldReceiver {
  readonly url: string;
  /** Requests received so far. */
  hits(): number;
  /** Resolves once `count` requests have arrived. */
  untilHits(count: number): Promise<void>;
  /** Answers every held request, and every later one at once, with `decision` (a JSON body). */
  release(decision: unknown): void;
  close(): Promise<void>;
}

export async function startHeldReceiver(): Promise<HeldReceiver> {
  let hits = 0;
  let answer: string | undefined;
  const held: ServerResponse[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const respond = (response: ServerResponse, body: string) => response.writeHead(200, { 'content-type': 'application/json' }).end(body);
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      hits++;
      for (const waiter of waiters.filter((w) => hits >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      if (answer !== undefined) respond(response, answer);
      else held.push(response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/policy`,
    hits: () => hits,
    untilHits: (count) => (hits >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve }))),
    release: (decision) => {
      answer = JSON.stringify(decision);
      for (const response of held.splice(0)) respond(response, answer);
    },
    close: () => {
      for (const response of held.splice(0)) response.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
