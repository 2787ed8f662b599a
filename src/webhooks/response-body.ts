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

/** The body as text, or `undefined` when it is empty. Errors name the host, never body bytes. */
export async function readControlBody(body: Body, contentLength: string | string[] | undefined, host: string, limit = CONTROL_BODY_LIMIT): Promise<string | undefined> {
  const declared = typeof contentLength === 'string' ? Number(contentLength) : NaN;
  // A declared length over the cap is refused without reading a byte.
  if (declared > limit) throw tooLarge(body, host, limit);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > limit) throw tooLarge(body, host, limit);
    chunks.push(chunk);
  }
  if (total === 0) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks, total));
  } catch {
    throw new WebhookError('invalid_response', `webhook response from ${host} is not valid UTF-8`);
  }
}

/** Destroying the body aborts the request, so the rest of it is never transferred on this connection. */
function tooLarge(body: Body, host: string, limit: number): WebhookError {
  body.destroy();
  return new WebhookError('response_too_large', `webhook response from ${host} exceeds ${limit} bytes`);
}
