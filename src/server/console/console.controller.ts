/**
 * `GET /console` (DESIGN §7): the operations console's static files. The page itself loads without a
 * key; every API call it makes carries the caller's key (asked in the page), so the API's own guard is
 * the one policy. Without keys the server listens on loopback only, the console with it.
 */
import { Controller, Get, Inject, Param, Req, Res, SetMetadata, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiError } from '../api/api-error.js';
import { ApiExceptionFilter } from '../api/api-exception.filter.js';
import { AGENT_HOOKS_PUBLIC } from './public-route.js';
import type { ConsoleFiles } from './console-files.js';

export const CONSOLE_FILES = Symbol('nest-agent-hooks:ConsoleFiles');

/**
 * Only our own files, no inline code, no other origin: the page works offline and a stored message shown
 * on it cannot run script. Not framed: the Approve button cannot be clickjacked.
 */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

@ApiExcludeController()
// The page and its assets hold no data (every API call the page makes is the caller's): a host's guard
// may let them through, so a browser's <script src> needs no Authorization header (public-route.ts).
@SetMetadata(AGENT_HOOKS_PUBLIC, true)
@UseFilters(ApiExceptionFilter)
@Controller('console')
export class ConsoleController {
  constructor(@Inject(CONSOLE_FILES) private readonly console: ConsoleFiles) {}

  @Get()
  index(@Req() request: Request, @Res() response: Response): void {
    // The page's asset URLs are relative: /console must become /console/ for them to resolve under it.
    if (!request.path.endsWith('/')) {
      const query = request.originalUrl.indexOf('?');
      response.redirect(301, `console/${query >= 0 ? request.originalUrl.slice(query) : ''}`);
      return;
    }
    this.send(response, 'index.html');
  }

  @Get('*path')
  file(@Param('path') path: string | string[], @Res() response: Response): void {
    // The matched segments, decoded by the router: the same under any prefix the routes are mounted at.
    const name = Array.isArray(path) ? path.join('/') : path;
    this.send(response, name === '' ? 'index.html' : name);
  }

  private send(response: Response, name: string): void {
    if (!this.console.built) throw new ApiError(404, 'not_found', 'the console is not built: run `npm run build`');
    const path = this.console.files.get(name);
    if (path === undefined) throw new ApiError(404, 'not_found', `no console file ${JSON.stringify(name.slice(0, 100))}`);
    response.set(SECURITY_HEADERS);
    // Asset names carry a content hash (Vite): cached for good. The page itself is checked every time.
    const immutable = name.startsWith('assets/');
    response.set('Cache-Control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    response.sendFile(path, { dotfiles: 'deny', cacheControl: false, lastModified: !immutable }, (error) => {
      // Gone since the start (a rebuild under a running server), or the client went away.
      if (error && !response.headersSent) response.status(404).json({ error: { code: 'not_found', message: 'the console file is gone: reload the page' } });
    });
  }
}
