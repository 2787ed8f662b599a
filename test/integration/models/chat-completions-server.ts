/**
 * A local HTTP server speaking the Chat Completions wire format, for provider tests: each test installs a
 * handler; every request is recorded (path, headers, parsed JSON body) so tests can assert its shape.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedCall {
  method: string;
  /** Path and query. */
  url: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export type Handler = (call: RecordedCall, res: ServerResponse) => void;

export interface ChatCompletionsServer {
  readonly baseUrl: string;
  readonly calls: RecordedCall[];
  handle(handler: Handler): void;
  close(): Promise<void>;
}

export function completion(message: Record<string, unknown>, usage?: Record<string, unknown>): Record<string, unknown> {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-test',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop' }],
    ...(usage ? { usage } : {}),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

export async function startChatCompletionsServer(): Promise<ChatCompletionsServer> {
  let handler: Handler = (_call, res) => sendJson(res, 500, { error: 'no handler' });
  const calls: RecordedCall[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      const call: RecordedCall = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      calls.push(call);
      handler(call, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    calls,
    handle: (next) => {
      handler = next;
    },
    close: async () => {
      // Hung requests hold their sockets open; close them so the server can stop.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One `chat.completion.chunk` of a streamed answer (SPEC K5): a piece of text, tool-call parts, a finish. */
export function chunk(delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gpt-test', choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

/** The final chunk `stream_options.include_usage` asks for: no choice, the usage. */
export function usageChunk(usage: Record<string, unknown>): Record<string, unknown> {
  return { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gpt-test', choices: [], usage };
}

/** Opens a streamed answer; `send` writes one chunk as an SSE `data:` line, `end` writes `[DONE]` and closes. */
export function openStream(res: ServerResponse): { send(data: unknown): void; end(done?: boolean): void } {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
  return {
    send: (data) => {
      res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
    },
    end: (done = true) => {
      if (done) res.write('data: [DONE]\n\n');
      res.end();
    },
  };
}

/** A whole streamed answer: `pieces` of text, then the finish, the usage and `[DONE]`. */
export function streamAnswer(res: ServerResponse, pieces: readonly string[], usage?: Record<string, unknown>): void {
  const stream = openStream(res);
  stream.send(chunk({ role: 'assistant', content: '' }));
  for (const piece of pieces) stream.send(chunk({ content: piece }));
  stream.send(chunk({}, 'stop'));
  if (usage) stream.send(usageChunk(usage));
  stream.end();
}
