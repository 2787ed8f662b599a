/**
 * An error the HTTP API answers as `{ error: { code, message } }` with its own status (DESIGN §7). The
 * message is shown to the caller: it names the field or the thing, never a secret or a stored value.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Extra response headers, e.g. `WWW-Authenticate` on a 401. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** 400: bad input; the message names the field (`agentId: Required`). */
export function invalidRequest(message: string): ApiError {
  return new ApiError(400, 'invalid_request', message);
}

/** 404: also the answer for another owner's operation, so its existence is not revealed. */
export function notFound(message: string): ApiError {
  return new ApiError(404, 'not_found', message);
}
