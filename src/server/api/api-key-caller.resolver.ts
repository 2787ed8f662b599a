/**
 * The standalone server's callers: bearer API keys (DESIGN §7). With keys configured, a request without a
 * known key is a 401; with none, every request is the local owner's (the server then listens on loopback only).
 */
import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { ApiError } from './api-error.js';
import type { CallerResolver } from './caller-resolver.js';
import { LOCAL_OWNER, type Caller } from './caller.js';
import { SERVER_API_OPTIONS, type ServerApiOptions } from './server-api.options.js';

const BEARER = /^Bearer[ \t]+(.+)$/i;
const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="nest-agent-hooks"' };

@Injectable()
export class ApiKeyCallerResolver implements CallerResolver {
  constructor(@Inject(SERVER_API_OPTIONS) private readonly options: ServerApiOptions) {}

  resolve(request: Request): Caller {
    const keys = this.options.apiKeys;
    if (!keys.enabled) return { ownerId: LOCAL_OWNER, authenticated: false };
    const header = request.headers.authorization;
    const token = typeof header === 'string' ? BEARER.exec(header)?.[1]?.trim() : undefined;
    if (!token) throw new ApiError(401, 'unauthorized', 'an API key is required: Authorization: Bearer <key>', CHALLENGE);
    const ownerId = keys.ownerOf(token);
    if (ownerId === undefined) throw new ApiError(401, 'unauthorized', 'the API key is not valid', CHALLENGE);
    return { ownerId, authenticated: true };
  }
}
