/**
 * Bearer API key authentication for the `/v1` routes (issue 7 item 2). With keys configured, a request
 * without a known key is a 401; with none, every request is the local owner's (loopback-only server).
 */
import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { ApiError } from './api-error.js';
import { LOCAL_OWNER, setCaller } from './caller.js';
import { SERVER_API_OPTIONS, type ServerApiOptions } from './server-api.options.js';

const BEARER = /^Bearer[ \t]+(.+)$/i;
const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="nest-agent-hooks"' };

@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(@Inject(SERVER_API_OPTIONS) private readonly options: ServerApiOptions) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    const keys = this.options.apiKeys;
    if (!keys.enabled) {
      setCaller(request, { ownerId: LOCAL_OWNER, authenticated: false });
      return true;
    }
    const header = request.headers.authorization;
    const token = typeof header === 'string' ? BEARER.exec(header)?.[1]?.trim() : undefined;
    if (!token) throw new ApiError(401, 'unauthorized', 'an API key is required: Authorization: Bearer <key>', CHALLENGE);
    const ownerId = keys.ownerOf(token);
    if (ownerId === undefined) throw new ApiError(401, 'unauthorized', 'the API key is not valid', CHALLENGE);
    setCaller(request, { ownerId, authenticated: true });
    return true;
  }
}
