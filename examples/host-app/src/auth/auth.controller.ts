/**
 * The browser's sign-in: a form that takes the user's token and opens a cookie session, then sends the
 * browser to the agents console, which calls the mounted API with that cookie (same origin, relative
 * URLs) and so never asks for a key of its own.
 */
import { Body, Controller, Get, Header, HttpCode, Post, Req, Res, UnauthorizedException } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Public } from './host-auth.guard.js';
import { cookieValue, SessionStore, SESSION_COOKIE } from './sessions.js';
import { UserDirectory } from './users.js';

const CONSOLE = '/agents/console/';

const LOGIN_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in · support desk</title></head>
<body><main><h1>Sign in</h1>
<form method="post" action="/auth/login">
<label for="token">Access token</label> <input id="token" name="token" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form></main></body></html>`;

@Controller()
export class AuthController {
  constructor(
    private readonly users: UserDirectory,
    private readonly sessions: SessionStore,
  ) {}

  @Public()
  @Get('login')
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('content-security-policy', "default-src 'none'; form-action 'self'")
  page(): string {
    return LOGIN_PAGE;
  }

  /** Form or JSON `{ token }`: a session cookie, then 303 to the console. */
  @Public()
  @Post('auth/login')
  login(@Body() body: { token?: unknown } | undefined, @Res() response: Response): void {
    const user = typeof body?.token === 'string' ? this.users.byBearerToken(body.token) : undefined;
    if (!user) throw new UnauthorizedException('unknown token');
    const session = this.sessions.open(user);
    response.cookie(SESSION_COOKIE, session.id, { httpOnly: true, sameSite: 'strict', path: '/', maxAge: session.maxAgeSeconds * 1000, secure: process.env.COOKIE_SECURE === 'true' });
    response.redirect(303, CONSOLE);
  }

  @Public()
  @Post('auth/logout')
  @HttpCode(204)
  logout(@Req() request: Request, @Res({ passthrough: true }) response: Response): void {
    this.sessions.close(cookieValue(request.headers.cookie, SESSION_COOKIE));
    response.clearCookie(SESSION_COOKIE, { path: '/' });
  }
}
