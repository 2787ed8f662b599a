/**
 * The host's own authentication, global (APP_GUARD): a bearer token (API clients) or the session cookie
 * (the browser, after /auth/login). It runs on every route, the mounted agent routes included. Routes
 * marked public pass: the host's own (`@Public()`) and the console's static files, which nest-agent-hooks
 * marks with `AGENT_HOOKS_PUBLIC` because a browser sends no credentials of its choosing for `<script src>`
 * (they hold no data; every API call the page makes comes back through this guard).
 */
import { Injectable, SetMetadata, UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AGENT_HOOKS_PUBLIC } from 'nest-agent-hooks';
import { cookieValue, SessionStore, SESSION_COOKIE } from './sessions.js';
import { UserDirectory, type HostUser } from './users.js';

export type SignedInRequest = Request & { user?: HostUser };

const HOST_PUBLIC = 'host-app:public';
/** The host's own public routes (the login page). */
export const Public = () => SetMetadata(HOST_PUBLIC, true);

@Injectable()
export class HostAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly users: UserDirectory,
    private readonly sessions: SessionStore,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(HOST_PUBLIC, targets)) return true;
    if (this.reflector.getAllAndOverride<boolean>(AGENT_HOOKS_PUBLIC, targets)) return true;
    const request = context.switchToHttp().getRequest<SignedInRequest>();
    const bearer = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    const user = bearer !== undefined ? this.users.byBearerToken(bearer) : this.sessions.user(cookieValue(request.headers.cookie, SESSION_COOKIE));
    if (!user) throw new UnauthorizedException('sign in first: POST /auth/login, or send Authorization: Bearer <token>');
    request.user = user;
    return true;
  }
}
