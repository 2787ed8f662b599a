/**
 * The one exception filter (DESIGN §7): every error, from a route, a guard, a pipe, the body parser or an
 * unknown path, leaves as `{ error: { code, message } }`. A 5xx is logged by error type only (S1: a
 * message may hold user input); no stack ever reaches a caller.
 */
import { Catch, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { errorType } from '../../hooks/hook-errors.js';
import { toErrorResponse } from './api-error-response.js';

@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpApi');

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') return;
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    const request = http.getRequest<Request>();
    const error = toErrorResponse(exception);
    if (error.status >= 500) this.logger.error(`${request.method} ${request.route?.path ?? 'unrouted'} failed (${errorType(exception)})`);
    // A stream (SSE) that already started cannot change its status: end it.
    if (response.headersSent) {
      response.end();
      return;
    }
    response.status(error.status).set(error.headers).json({ error: { code: error.code, message: error.message } });
  }
}
