/**
 * Reads a control response body (W12): at most `limit` bytes, counted while streaming so an oversized or
 * endless body is cut off before it is buffered or parsed, then decoded as strict UTF-8.
 */
import { TextDecoder } from 'node:util';
import type { Dispatcher } from 'undici';
import { WebhookError } from './webhook-error.js';

/** 64 KiB: a decision is a few bytes; anything near this size is not one. */
export const CONTROL_BODY_LIMIT = 64 * 1024;

type Body = Dispatcher.ResponseData['body'];

/** Stateless between calls (no `stream` option), so one decoder serves every response. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The body as text, or `undefined` when it is empty. Errors name the host, never body bytes. */
export async function readControlBody(body: Body, contentLength: string | string[] | undefined, host: string, limit = CONTROL_BODY_LIMIT): Promise<string | undefined> {
  const declared = typeof contentLength === 'string' ? Number(contentLength) : NaN;
  // A declared length over the cap is refused without reading a byte.
  if (declared > limit) throw tooLarge(body, host, limit);
  const bytes = await new Promise<Buffer>((resolve, reject) => {
    // Listeners rather than `for await`: the async iterator costs more than the decision it carries.
    const chunks: Buffer[] = [];
    let total = 0;
    body.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > limit) reject(tooLarge(body, host, limit));
      else chunks.push(chunk);
    });
    body.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total)));
    body.once('error', reject);
  });
  if (bytes.length === 0) return undefined;
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    throw new WebhookError('invalid_response', `webhook response from ${host} is not valid UTF-8`);
  }
}

/** Destroying the body aborts the request, so the rest of it is never transferred on this connection. */
function tooLarge(body: Body, host: string, limit: number): WebhookError {
  body.destroy();
  return new WebhookError('response_too_large', `webhook response from ${host} exceeds ${limit} bytes`);
}
