/**
 * Every error the API can meet, as the one response shape `{ error: { code, message } }` with its status
 * (DESIGN §7). Caller-facing messages name fields and ids, never stored values or secrets; anything not
 * known here is a 500 with a fixed message (the filter logs its type, never its message or stack).
 */
import { HttpException } from '@nestjs/common';
import { CriticalHookDeliveryError, HookConfigurationError } from '../../hooks/hook-errors.js';
import {
  AlreadyCompletedError,
  OperationNotFoundError,
  StaleOperationError,
  IdempotencyKeyReusedError,
  InterventionNotPendingError,
  InvalidEditedArgumentsError,
  OperationCompletedError,
  RuntimeShuttingDownError,
  UnknownAgentError,
  UnknownInterventionError,
  UnknownOperationError,
} from '../../runtime/runtime-errors.js';
import { ApiError } from './api-error.js';
import { InvalidClientToolsError } from '../../runtime/tools/client-tools.js';
import { JSON_BODY_LIMIT_BYTES } from './json-body.js';

export interface ErrorResponse {
  status: number;
  code: string;
  message: string;
  headers: Readonly<Record<string, string>>;
}

const INTERNAL: ErrorResponse = { status: 500, code: 'internal', message: 'internal server error', headers: {} };

/** Codes of the HTTP errors Nest and the body parser raise, by status. */
const HTTP_CODES: Readonly<Record<number, string>> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  408: 'request_timeout',
  409: 'conflict',
  411: 'length_required',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'invalid_request',
  429: 'too_many_requests',
};

const response = (status: number, code: string, message: string, headers: Readonly<Record<string, string>> = {}): ErrorResponse => ({ status, code, message, headers });

function fromHttpException(exception: HttpException): ErrorResponse {
  const status = exception.getStatus();
  if (status >= 500 || status < 400) return INTERNAL;
  // The body parser's SyntaxError: its text quotes part of the body, so say it plainly instead.
  if (status === 400 && exception.cause instanceof SyntaxError) return response(400, 'invalid_json', 'the request body is not valid JSON');
  if (status === 413) return response(413, 'payload_too_large', `the request body is larger than ${JSON_BODY_LIMIT_BYTES} bytes`);
  return response(status, HTTP_CODES[status] ?? 'invalid_request', exception.message);
}

export function toErrorResponse(exception: unknown): ErrorResponse {
  if (exception instanceof ApiError) return response(exception.status, exception.code, exception.message, exception.headers);
  if (exception instanceof UnknownAgentError) return response(404, exception.code, exception.message);
  // G4: the process is stopping; another process (or this one after its restart) takes the request.
  if (exception instanceof RuntimeShuttingDownError) return response(503, exception.code, 'the server is shutting down; retry', { 'retry-after': '1' });
  if (exception instanceof UnknownOperationError || exception instanceof OperationNotFoundError) return response(404, 'not_found', 'no such operation');
  if (exception instanceof UnknownInterventionError) return response(404, exception.code, exception.message);
  if (exception instanceof InterventionNotPendingError || exception instanceof AlreadyCompletedError || exception instanceof OperationCompletedError) {
    return response(409, exception.code, exception.message);
  }
  // G8: the key already names an operation created from another body.
  if (exception instanceof IdempotencyKeyReusedError) return response(422, exception.code, exception.message);
  // Two decisions raced on the same operation: the loser may retry.
  if (exception instanceof StaleOperationError) return response(409, 'conflict', 'the operation changed meanwhile; read it again and retry');
  // A caller hook's configuration: the message names the hook and the field, never a value.
  if (exception instanceof HookConfigurationError) return response(400, 'invalid_request', exception.message);
  // F6: edited arguments the tool's schema refuses, or over G6's limits: the message names the path, never a value.
  if (exception instanceof InvalidEditedArgumentsError) return response(400, exception.code, exception.message);
  // Declared client tools: the message names the field, never a value.
  if (exception instanceof InvalidClientToolsError) return response(400, 'invalid_request', exception.message);
  // A caller's own `fallback: 'none'` webhook failed during a decision: its receiver's fault, not ours.
  if (exception instanceof CriticalHookDeliveryError) return response(424, 'hook_delivery_failed', 'a webhook with fallback none could not be delivered');
  if (exception instanceof HttpException) return fromHttpException(exception);
  return INTERNAL;
}
