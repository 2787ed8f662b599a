/**
 * One log line per HTTP request: request id, method, route (the matched pattern, e.g.
 * `/v1/operations/:id` — never the raw URL, whose query string may carry a secret), status and latency.
 * Never headers or bodies (S1). The request id comes from a well-formed `x-request-id` header, else a new
 * UUID; it is echoed in the response header and set on every line logged while the request is handled.
 * Registered with `app.use` before Nest's body parser, so rejected bodies (400, 413) are logged too.
 */
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { JsonLogger } from './json-logger.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/** Ids a client may choose: short, printable, nothing that could break a log line or a header. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Probes and scrapes are logged at debug: at info they would drown everything else. */
const QUIET_ROUTES: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

export function requestLog(logger: JsonLogger): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    const started = performance.now();
    const offered = req.headers[REQUEST_ID_HEADER];
    const requestId = typeof offered === 'string' && CLIENT_REQUEST_ID.test(offered) ? offered : randomUUID();
    res.setHeader(REQUEST_ID_HEADER, requestId);
    let logged = false;
    const done = () => {
      if (logged) return;
      logged = true;
      // Express sets `req.route` when a route matched; the pattern is safe to log, the URL is not.
      const route = (req.route as { path?: unknown } | undefined)?.path;
      const pattern = typeof route === 'string' ? route : '(no route)';
      const latencyMs = Math.round((performance.now() - started) * 10) / 10;
      const line = {
        msg: `${req.method} ${pattern} ${res.statusCode} ${latencyMs}ms`,
        requestId,
        method: req.method,
        route: pattern,
        status: res.statusCode,
        latencyMs,
        // The client went away before the response was complete (an SSE stream it closed, a dropped upload).
        ...(res.writableFinished ? {} : { aborted: true }),
      };
      if (res.statusCode >= 500) logger.error(line, 'Http');
      else if (QUIET_ROUTES.has(pattern)) logger.debug(line, 'Http');
      else logger.log(line, 'Http');
    };
    res.once('finish', done);
    res.once('close', done);
    logger.withRequest(requestId, next);
  };
}
