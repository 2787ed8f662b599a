/** A tiny JSON client for the black-box tests: status, parsed body and headers of every call. */

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface ApiClient {
  get<T = any>(path: string, headers?: Record<string, string>): Promise<Reply<T>>;
  /** `body` is sent as JSON; a string is sent as it is (for malformed JSON). */
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply<T>>;
}

async function parse(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function apiClient(baseUrl: string, apiKey?: string): ApiClient {
  const auth: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  const call = async (method: string, path: string, body: unknown, headers: Record<string, string>): Promise<Reply> => {
    const init: RequestInit = { method, headers: { ...auth, ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${baseUrl}${path}`, init);
    return { status: response.status, body: await parse(response), headers: response.headers };
  };
  return {
    get: (path, headers = {}) => call('GET', path, undefined, headers),
    post: (path, body, headers = {}) => call('POST', path, body, headers),
  };
}

export { until } from '../../support/eventually.js';

/** Every error of the API has exactly this shape (DESIGN §7). */
export function expectErrorShape(reply: Reply, status: number, code?: string): void {
  expect(reply.status).toBe(status);
  expect(Object.keys(reply.body ?? {})).toEqual(['error']);
  expect(Object.keys(reply.body.error).sort()).toEqual(['code', 'message']);
  expect(typeof reply.body.error.message).toBe('string');
  if (code !== undefined) expect(reply.body.error.code).toBe(code);
}
