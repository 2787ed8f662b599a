/**
 * A real HTTP receiver on 127.0.0.1 (port 0) for webhook client tests: each path maps to a behaviour, and
 * every connection and request is recorded so tests can assert what did (or did not) reach it.
 */
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Behaviour = (req: IncomingMessage, res: ServerResponse) => void;

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** `Date.now()` when the request arrived. */
  receivedAt: number;
}

export interface LoopbackReceiver {
  readonly port: number;
  /** Requests whose headers arrived (body filled in once it ends). */
  readonly requests: RecordedRequest[];
  /** TCP connections accepted so far. */
  connections(): number;
  url(path: string): string;
  route(path: string, behaviour: Behaviour): void;
  close(): Promise<void>;
}

export async function startReceiver(routes: Record<string, Behaviour> = {}): Promise<LoopbackReceiver> {
  const table = new Map(Object.entries(routes));
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const record: RecordedRequest = { method: req.method ?? '', path, headers: req.headers, body: '', receivedAt: Date.now() };
    requests.push(record);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      record.body = Buffer.concat(chunks).toString('utf8');
    });
    const behaviour = table.get(path);
    if (!behaviour) {
      res.writeHead(404).end();
      return;
    }
    behaviour(req, res);
  });
  server.on('connection', (socket: Socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    requests,
    connections: () => accepted,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    route: (path, behaviour) => void table.set(path, behaviour),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Writes `chunk` every `everyMs` until the client goes away; the interval dies with the response. */
export function writeForever(res: ServerResponse, chunk: Buffer | string, everyMs: number): void {
  const timer = setInterval(() => res.write(chunk), everyMs);
  res.on('close', () => clearInterval(timer));
  res.write(chunk);
}

/** Runs `fn` after `ms` unless the client disconnects first. */
export function later(res: ServerResponse, ms: number, fn: () => void): void {
  const timer = setTimeout(fn, ms);
  res.on('close', () => clearTimeout(timer));
}

/** Streams exactly `total` bytes of `x` in chunks (chunked encoding, no content-length). */
export function streamBytes(res: ServerResponse, total: number, chunkSize = 4096): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  let sent = 0;
  const pump = (): void => {
    while (sent < total) {
      const size = Math.min(chunkSize, total - sent);
      sent += size;
      if (!res.write(Buffer.alloc(size, 0x78))) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  pump();
}
