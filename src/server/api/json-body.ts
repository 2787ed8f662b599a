/**
 * JSON in (DESIGN §7): one JSON parser with a size limit. A larger body is refused while it streams in
 * (413), malformed JSON is a 400, a body nested deeper than 64 levels a 400 naming the field (G6); all reach
 * the exception filter as HTTP errors.
 */
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { MAX_JSON_DEPTH } from '../../hooks/input-limits.js';
import { invalidRequest } from './api-error.js';
import { tooDeepField } from './json-depth.js';

/** Generous for prompts and hook lists; small enough that a caller cannot make the server buffer much. */
export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;

/** Call before `listen` on an app created with `bodyParser: false`. */
export function useJsonBody(app: NestExpressApplication): void {
  // `strict`: only objects and arrays at the top level, so a bare `"text"` is malformed (400), not a string body.
  app.useBodyParser('json', { limit: JSON_BODY_LIMIT_BYTES, strict: true });
  // G6: right after parsing, on every route, before any recursive code sees the value.
  app.use(refuseDeepBodies);
}

function refuseDeepBodies(request: Request, _response: Response, next: NextFunction): void {
  const field = tooDeepField(request.body);
  if (field === undefined) next();
  else next(invalidRequest(`${field}: is nested deeper than ${MAX_JSON_DEPTH} levels`));
}
