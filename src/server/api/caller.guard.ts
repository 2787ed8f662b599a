/** The guard of every `/v1` route: the request's caller, from whichever resolver the module provides (G9). */
import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { CALLER_RESOLVER, type CallerResolver } from './caller-resolver.js';
import { setCaller } from './caller.js';

@Injectable()
export class CallerGuard implements CanActivate {
  constructor(@Inject(CALLER_RESOLVER) private readonly resolver: CallerResolver) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request>();
    setCaller(request, await this.resolver.resolve(request));
    return true;
  }
}
