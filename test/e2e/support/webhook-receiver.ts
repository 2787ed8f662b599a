/** A loopback HTTP receiver for caller webhooks: records every JSON body it gets, answers 204. */
import { createServer, type Server } from 'node:http';

export interface WebhookReceiver {
  url: string;
  bodies: any[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<WebhookReceiver> {
  const bodies: any[] = [];
  const server: Server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => {
      try {
        bodies.push(JSON.parse(text));
      } catch {
        bodies.push(text);
      }
      response.statusCode = 204;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    bodies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
