/**
 * SPEC O2: a caller's W3C `traceparent` / `tracestate` become the context its request is handled in, so
 * `POST /v1/operations` starts the operation's `invoke_agent` span as a child of the caller's span (and a
 * decision joins the caller's trace too). Registered after the body parser: a parser's stream callbacks
 * would run outside the context. A malformed header is ignored, never an error (the API does not depend on it).
 */
import type { NextFunction, Request, Response } from 'express';
import type { AgentTracer } from '../../tracing/agent-tracer.js';

export function incomingTrace(tracer: AgentTracer): (req: Request, res: Response, next: NextFunction) => void {
  return (req, _res, next) => tracer.withIncoming(req.headers, () => next());
}
