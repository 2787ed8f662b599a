/**
 * A loopback webhook receiver for the crash tests: each path either answers 204 at once or HOLDS every
 * delivery until the test releases the path (a slow webhook whose end the test decides, no sleeps). Every
 * delivery is recorded with its `webhook-id` header and parsed JSON body, so a test can count logical
 * events (distinct webhook-ids) apart from deliveries (at least once).
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Delivery {
  path: string;
  webhookId: string | undefined;
  /** The parsed JSON body (or the raw text). */
  body: any;
  receivedAt: number;
}

export interface HoldingReceiver {
  url(path: string): string;
  /** Complete deliveries (body read) so far, in arrival order. */
  readonly deliveries: Delivery[];
  /** Deliveries to `path`, optionally of one operation. */
  at(path: string, operationId?: string): Delivery[];
  /** Resolves with the first delivery (past or future) that `matches`; rejects after `timeoutMs`. */
  next(matches: (delivery: Delivery) => boolean, what: string, timeoutMs?: number): Promise<Delivery>;
  /** Makes `path` hold every delivery from now on. */
  hold(path: string): void;
  /** Answers the held deliveries of `path` (all paths without one) with 204, and every later one at once. */
  release(path?: string): void;
  close(): Promise<void>;
}

/** `held`: the paths that hold from the start; any other path answers 204. */
export async function startHoldingReceiver(held: string[] = []): Promise<HoldingReceiver> {
  const holding = new Set(held);
  const waiting = new Map<string, ServerResponse[]>();
  const deliveries: Delivery[] = [];
  const waiters = new Set<(delivery: Delivery) => void>();
  const sockets = new Set<Socket>();
  const answer = (response: ServerResponse) => {
    // A held response whose caller was killed has nowhere to go.
    if (!response.destroyed && !response.writableEnded) response.writeHead(204).end();
  };
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // kept as text
      }
      const header = request.headers['webhook-id'];
      const delivery: Delivery = { path, webhookId: Array.isArray(header) ? header[0] : header, body, receivedAt: Date.now() };
      deliveries.push(delivery);
      for (const waiter of [...waiters]) waiter(delivery);
      if (holding.has(path)) {
        const list = waiting.get(path) ?? [];
        list.push(response);
        waiting.set(path, list);
      } else answer(response);
    });
    response.on('error', () => undefined);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    deliveries,
    at: (path, operationId) => deliveries.filter((d) => d.path === path && (operationId === undefined || d.body?.operationId === operationId)),
    next: (matches, what, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const found = deliveries.find(matches);
        if (found) return resolve(found);
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`webhook receiver: ${what} did not arrive within ${timeoutMs} ms (got ${deliveries.length} deliveries: ${JSON.stringify(deliveries.map((d) => [d.path, d.body?.type, d.body?.operationId]))})`));
        }, timeoutMs);
        const waiter = (delivery: Delivery) => {
          if (!matches(delivery)) return;
          clearTimeout(timer);
          waiters.delete(waiter);
          resolve(delivery);
        };
        waiters.add(waiter);
      }),
    hold: (path) => void holding.add(path),
    release: (path) => {
      for (const name of path === undefined ? [...holding] : [path]) {
        holding.delete(name);
        for (const response of waiting.get(name)?.splice(0) ?? []) answer(response);
      }
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
