/**
 * Who a request is for (SPEC G9): one port behind the `/v1` routes' guard. The standalone server resolves
 * the caller from its API keys (api-key-caller.resolver.ts); a host that mounts the routes resolves the
 * owner with its own function (mount/host-owner.resolver.ts). A resolver throws an `ApiError(401)` for a
 * request it gives no owner.
 */
import type { Request } from 'express';
import type { Caller } from './caller.js';

export interface CallerResolver {
  resolve(request: Request): Caller | Promise<Caller>;
}

export const CALLER_RESOLVER = Symbol('nest-agent-hooks:CallerResolver');
