/**
 * Typed webhook failures. Messages name the hook, header or variable involved and never a value, a
 * secret or a response body.
 */
export type WebhookErrorCode =
  | 'configuration'
  | 'http_error'
  | 'network_error'
  | 'timeout'
  | 'invalid_response'
  | 'response_too_large'
  | 'cancelled'
  /** A queued delivery (`queue`, `qstash`) could not be handed to its queue (D3). */
  | 'queue_unavailable';

export class WebhookError extends Error {
  override readonly name = 'WebhookError';

  constructor(
    readonly code: WebhookErrorCode,
    message: string,
    /** HTTP status, for `http_error`. */
    readonly status?: number,
    /** The receiver's `Retry-After`, in milliseconds from when the answer arrived (`http_error` only). */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}
