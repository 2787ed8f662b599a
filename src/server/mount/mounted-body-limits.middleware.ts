/**
 * The standalone server's body limits on the mounted routes (DESIGN §7, G6). The host's own parser has
 * already read the body: a declared length over our limit is a 413 and a body nested deeper than 64 levels
 * a 400 naming the field, before any route or recursive code sees it. The caller's `traceparent` becomes
 * the handler's context as on the server (O2).
 */
import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { MAX_JSON_DEPTH } from '../../hooks/input-limits.js';
import { AgentTracer } from '../../tracing/agent-tracer.js';
import { ApiError, invalidRequest } from '../api/api-error.js';
import { JSON_BODY_LIMIT_BYTES } from '../api/json-body.js';
import { tooDeepField } from '../api/json-depth.js';
import { toErrorResponse } from '../api/api-error-response.js';

@Injectable()
export class MountedBodyLimits implements NestMiddleware {
  constructor(private readonly tracer: AgentTracer) {}

  use(request: Request, response: Response, next: NextFunction): void {
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > JSON_BODY_LIMIT_BYTES) return refuse(response, new ApiError(413, 'payload_too_large', `the request body is larger than ${JSON_BODY_LIMIT_BYTES} bytes`));
    const field = tooDeepField(request.body);
    if (field !== undefined) return refuse(response, invalidRequest(`${field}: is nested deeper than ${MAX_JSON_DEPTH} levels`));
    this.tracer.withIncoming(request.headers, () => next());
  }
}

/** Answered here, in the API's own shape: an error passed on from a middleware would meet the host's filters, not ours. */
function refuse(response: Response, refusal: ApiError): void {
  const error = toErrorResponse(refusal);
  response.status(error.status).set(error.headers).json({ error: { code: error.code, message: error.message } });
}
