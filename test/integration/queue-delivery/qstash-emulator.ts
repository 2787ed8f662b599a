/**
 * A local stand-in for the QStash publish API, enough for the official client: `POST /v2/publish/<url>`
 * with `Authorization: Bearer <token>` answers 201 `{ messageId }`, then forwards the body to the
 * destination with the `Upstash-Forward-*` headers (prefix removed), the content type, and an
 * `Upstash-Signature` JWT (HS256 with the current, or the next, signing key; `iss: Upstash`, `sub` the
 * destination, `body` the base64url SHA-256 of the body), as QStash does.
 */
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PublishRecord {
  readonly destination: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface QStashEmulator {
  readonly url: string;
  readonly token: string;
  readonly currentSigningKey: string;
  readonly nextSigningKey: string;
  /** Accepted publishes (authorized, not failed on purpose). */
  readonly publishes: PublishRecord[];
  /** Which key signs forwarded messages. */
  signWith: 'current' | 'next';
  /** Answer every publish with this status and body instead of accepting it. */
  failWith: { status: number; body: string } | undefined;
  /** Accept publishes without forwarding them. */
  forward: boolean;
  /** Resolves once every forward started so far has been answered. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

export async function startQStashEmulator(): Promise<QStashEmulator> {
  const forwards = new Set<Promise<void>>();
  const state: QStashEmulator = {
    url: '',
    token: `qstash-token-${randomUUID()}`,
    currentSigningKey: `sig_current_${randomUUID()}`,
    nextSigningKey: `sig_next_${randomUUID()}`,
    publishes: [],
    signWith: 'current',
    failWith: undefined,
    forward: true,
    settled: async () => {
      while (forwards.size > 0) await Promise.all([...forwards]);
    },
    close: async () => {
      await state.settled();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const prefix = '/v2/publish/';
      if (req.method !== 'POST' || !req.url?.startsWith(prefix)) {
        res.writeHead(404).end();
        return;
      }
      if (req.headers.authorization !== `Bearer ${state.token}`) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid token' }));
        return;
      }
      if (state.failWith) {
        res.writeHead(state.failWith.status, { 'content-type': 'text/plain' }).end(state.failWith.body);
        return;
      }
      const destination = req.url.slice(prefix.length);
      state.publishes.push({ destination, headers: req.headers, body });
      const messageId = `msg_${randomUUID()}`;
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ messageId }));
      if (!state.forward) return;
      const key = state.signWith === 'current' ? state.currentSigningKey : state.nextSigningKey;
      const forwarding = forwardTo(destination, req.headers, body, key, messageId).finally(() => forwards.delete(forwarding));
      forwards.add(forwarding);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (state as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

function forwardTo(destination: string, incoming: IncomingHttpHeaders, body: string, key: string, messageId: string): Promise<void> {
  const headers: Record<string, string> = {
    'upstash-signature': sign(key, destination, body),
    'upstash-message-id': messageId,
    'upstash-retried': '0',
    'content-length': String(Buffer.byteLength(body)),
  };
  if (typeof incoming['content-type'] === 'string') headers['content-type'] = incoming['content-type'];
  for (const [name, value] of Object.entries(incoming)) {
    if (name.startsWith('upstash-forward-') && typeof value === 'string') headers[name.slice('upstash-forward-'.length)] = value;
  }
  return new Promise<void>((resolve) => {
    // A fresh connection per forward (no keep-alive pool outlives the test).
    const req = request(destination, { method: 'POST', headers, agent: false }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', () => resolve());
    req.end(body);
  });
}

function sign(key: string, destination: string, body: string): string {
  const now = Math.floor(Date.now() / 1000);
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const header = encode({ alg: 'HS256', typ: 'JWT' });
  const claims = encode({
    iss: 'Upstash',
    sub: destination,
    exp: now + 300,
    nbf: now,
    iat: now,
    jti: `jwt_${randomUUID()}`,
    body: createHash('sha256').update(body).digest('base64url'),
  });
  const signature = createHmac('sha256', key).update(`${header}.${claims}`).digest('base64url');
  return `${header}.${claims}.${signature}`;
}
