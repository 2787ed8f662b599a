/**
 * SPEC G9 in a host app: the caller of a mounted route is the owner the host's function returns. No owner
 * is a 401; a function that throws is a 500 with the API's plain body (the exception filter logs its type,
 * never its message or stack, which may hold what the host put there).
 */
import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { ApiError } from '../api/api-error.js';
import type { CallerResolver } from '../api/caller-resolver.js';
import type { Caller } from '../api/caller.js';
import { MAX_IDENTIFIER_LENGTH } from '../../hooks/input-limits.js';
import { AGENT_HOOKS_HTTP_OPTIONS, type AgentHooksHttpOptions } from './agent-hooks-http.options.js';

@Injectable()
export class HostOwnerResolver implements CallerResolver {
  constructor(@Inject(AGENT_HOOKS_HTTP_OPTIONS) private readonly options: AgentHooksHttpOptions) {}

  async resolve(request: Request): Promise<Caller> {
    const ownerId = await this.options.owner(request);
    if (ownerId === undefined || ownerId === '') throw new ApiError(401, 'unauthorized', 'sign in to use this API');
    // An owner id is stored with each operation: the same identifier limit as everywhere else (G6).
    if (typeof ownerId !== 'string' || ownerId.length > MAX_IDENTIFIER_LENGTH) throw new TypeError('the owner resolver returned an invalid owner id');
    return { ownerId, authenticated: true };
  }
}
