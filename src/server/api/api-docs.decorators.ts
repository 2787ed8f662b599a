/** OpenAPI decorators shared by the `/v1` controllers: the error responses and the id parameters. */
import { applyDecorators } from '@nestjs/common';
import { ApiParam, ApiResponse } from '@nestjs/swagger';
import { ERROR_RESPONSE } from './openapi-schemas.js';

const ERROR_TEXT: Readonly<Record<number, string>> = {
  400: 'Invalid input; the message names the field',
  401: 'Missing or invalid API key',
  404: 'No such operation (or another owner’s), agent or tool call',
  409: 'Not pending any more, or already completed',
  413: 'Request body too large',
  422: 'The Idempotency-Key was already used with a different body (idempotency_key_reused)',
  424: "A caller webhook with fallback 'none' could not be delivered",
  429: 'Too many event streams of this caller are open (too_many_streams)',
};

/** `{ error: { code, message } }` for each status. */
export function ApiErrors(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(...statuses.map((status) => ApiResponse({ status, description: ERROR_TEXT[status] ?? 'Error', schema: ERROR_RESPONSE })));
}

export function ApiOperationId(): MethodDecorator & ClassDecorator {
  return ApiParam({ name: 'id', description: 'The operation id', schema: { type: 'string', format: 'uuid' } });
}

export function ApiToolCallId(): MethodDecorator & ClassDecorator {
  return ApiParam({ name: 'toolCallId', description: 'The tool call id (from pendingTools)', schema: { type: 'string' } });
}
