/**
 * Every call the console makes goes through here: the base URL of the API (the folder above /console/,
 * so the page works behind a path prefix), `Authorization: Bearer <key>` when a key is known, and one
 * place that turns a 401 into "ask for the key".
 */
import { storedApiKey } from './api-key-store.js';
import type { ApiErrorBody } from './types.js';

/** The server refused the request for want of a valid key; `withKey` tells whether one was sent. */
export class UnauthorizedError extends Error {
  constructor(
    readonly withKey: boolean,
    /** The key the refused request carried: a late answer to an older key must not drop a newer one. */
    readonly key?: string,
  ) {
    super(withKey ? 'the API key was refused' : 'an API key is required');
    this.name = 'UnauthorizedError';
  }
}

/** A non-2xx answer of the API, with its `{ error: { code, message } }`. */
export class ApiCallError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiCallError';
  }
}

type UnauthorizedListener = (error: UnauthorizedError) => void;
const listeners = new Set<UnauthorizedListener>();

/** The app shows the key form when any call is refused. */
export function onUnauthorized(listener: UnauthorizedListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function apiUrl(path: string): string {
  return new URL(`../${path.replace(/^\//, '')}`, document.baseURI).toString();
}

export function authHeaders(): Record<string, string> {
  const key = storedApiKey();
  return key ? { authorization: `Bearer ${key}` } : {};
}

/** Throws `UnauthorizedError` (and tells the listeners) on a 401. */
export function checkAuthorized(response: Response, headers: Record<string, string>): void {
  if (response.status !== 401) return;
  const sent = headers.authorization?.replace(/^Bearer /, '');
  const error = new UnauthorizedError(sent !== undefined, sent);
  for (const listener of listeners) listener(error);
  throw error;
}

async function failure(response: Response): Promise<ApiCallError> {
  let body: Partial<ApiErrorBody> = {};
  try {
    body = (await response.json()) as Partial<ApiErrorBody>;
  } catch {
    // not JSON: the status says enough
  }
  return new ApiCallError(response.status, body.error?.code ?? 'http_error', body.error?.message ?? `HTTP ${response.status}`);
}

export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const headers = authHeaders();
  const response = await fetch(apiUrl(path), { headers: { accept: 'application/json', ...headers }, signal, cache: 'no-store' });
  checkAuthorized(response, headers);
  if (!response.ok) throw await failure(response);
  return (await response.json()) as T;
}

export async function postJson<T>(path: string, body: unknown): Promise<T> {
  const headers = authHeaders();
  const response = await fetch(apiUrl(path), {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  checkAuthorized(response, headers);
  if (!response.ok) throw await failure(response);
  return (await response.json()) as T;
}
